import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { json } from '../helpers/fault-server.js';
import { documentBody } from '../helpers/seed-bodies.js';
import { useFaultServer } from '../helpers/hooks.js';
import { BIN, makeConfigDir, ROOT, runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp.js';
import { unprivilegedCli } from '../helpers/world-readable-cli.js';
import { ensureBuilt, KEY, tempFile } from './support.js';

// Issue 22 item 3: FACECTL_STATE_DIR on a shared directory. Another user can plant a symlink where a
// batch record is about to be written; facectl must not write through it.

beforeAll(() => ensureBuilt(), 120_000);
const server = useFaultServer();

describe('a shared (1777) state directory with a symlink planted at the journal temp name', () => {
  it('is refused with a clear error; the link target is untouched and nothing is sent (bin)', async () => {
    const shared = makeTempDir('facectl-shared-');
    chmodSync(shared, 0o1777);
    // What another user could do there: make batches/ and plant a link at the name of the next journal.
    mkdirSync(join(shared, 'batches'), { mode: 0o777 });
    chmodSync(join(shared, 'batches'), 0o1777);
    const target = join(makeTempDir('facectl-victim-'), 'precious');
    writeFileSync(target, 'precious\n');
    const file = tempFile('batch.ndjson', `${JSON.stringify({ alias: 'ada', label: 'x', content: 'hello' })}\n`);
    const id = createHash('sha256')
      .update(`file:${realpathSync(file)}`)
      .digest('hex')
      .slice(0, 24);
    const journal = join(shared, 'batches', `${id}.ndjson`);
    const before = server.requests.length;
    // The link is named with the pid of the process that will write the journal: the shell's own, kept by exec.
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        'sh',
        [
          '-c',
          'ln -s "$1" "$2.$$.tmp" && exec "$3" "$4" docs submit --file "$5"',
          'sh',
          target,
          journal,
          process.execPath,
          BIN,
          file,
        ],
        {
          cwd: ROOT,
          env: {
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            HOME: process.env.HOME ?? '/tmp',
            NO_COLOR: '1',
            FACECTL_CONFIG_DIR: makeConfigDir(),
            FACECTL_STATE_DIR: shared,
            FACECTL_API_KEY: KEY,
            FACECTL_BASE_URL: server.baseUrl,
          },
          timeout: 20_000,
        },
        (error, _stdout, stderr) => resolve({ code: error ? (error.code as number | null) : 0, stderr }),
      );
    });
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
    expect(result.code).toBe(ExitCode.usage);
    expect(result.stderr).toContain(`refusing to write batch records: the state directory ${shared} has mode 1777`);
    expect(result.stderr).toContain(
      `set FACECTL_STATE_DIR to a directory only you can write to (a missing one is made 0700); leave ${shared} as it is: it is shared, others need to write to it`,
    );
    expect(result.stderr).not.toContain('chmod');
    expect(server.requests.length).toBe(before);
  });
});

describe('a FACECTL_STATE_DIR that is not a directory', () => {
  it.each([
    ['a file', (file: string) => file],
    ['under a file', (file: string) => join(file, 'facectl')],
  ])(
    '%s -> exit 2 naming it, with the fix; the file is untouched and nothing is sent (bin)',
    async (_name, stateDir) => {
      const file = tempFile('not-a-dir', 'mine\n');
      const batch = tempFile('batch.ndjson', `${JSON.stringify({ alias: 'ada', label: 'x', content: 'hello' })}\n`);
      const before = server.requests.length;
      const result = await runCli(['docs', 'submit', '--file', batch], {
        env: { FACECTL_STATE_DIR: stateDir(file), FACECTL_API_KEY: KEY, FACECTL_BASE_URL: server.baseUrl },
      });
      expect(result.code, result.stderr).toBe(ExitCode.usage);
      expect(result.stderr).toContain(
        `refusing to write batch records: the state directory ${stateDir(file)} is not a directory`,
      );
      expect(result.stderr).toContain('set FACECTL_STATE_DIR to a directory');
      expect(result.stderr).not.toContain('permissions');
      expect(readFileSync(file, 'utf8')).toBe('mine\n');
      expect(server.requests.length).toBe(before);
    },
  );
});

// A ring's find: FACECTL_STATE_DIR a symlink to nothing: `docs submit --file` failed with "cannot write the batch
// record …/batches: ENOENT", fix "check … and its disk", exit 1. The configuration directory is refused so (config-safety).
describe('a FACECTL_STATE_DIR that is, or is under, a symlink to nothing', () => {
  it.each([
    ['the symlink', (link: string) => link, ''],
    ['under the symlink', (link: string) => join(link, 'facectl'), 'under LINK, '],
  ])('%s -> exit 2 naming the symlink, with the fix; nothing made or sent (bin)', async (_name, stateDir, under) => {
    const parent = makeTempDir('facectl-dangling-');
    const link = join(parent, 'state');
    const target = join(parent, 'gone');
    symlinkSync(target, link);
    const dir = stateDir(link);
    const batch = tempFile('batch.ndjson', `${JSON.stringify({ alias: 'ada', label: 'x', content: 'hello' })}\n`);
    const before = server.requests.length;
    const result = await runCli(['docs', 'submit', '--file', batch], {
      env: { FACECTL_STATE_DIR: dir, FACECTL_API_KEY: KEY, FACECTL_BASE_URL: server.baseUrl },
    });
    expect(result.code, result.stderr).toBe(ExitCode.usage);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: refusing to write batch records: the state directory ${dir} is ${under.replace('LINK', link)}a symlink to ${target}, which does not exist; nothing was sent\n` +
        `create its target (\`mkdir -m 700 -p ${target}\`) or remove the symlink (facectl then makes the directory), or set FACECTL_STATE_DIR to another directory\n`,
    );
    expect(readdirSync(parent)).toEqual(['state']);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(server.requests.length).toBe(before);
  });
});

// A ring's find: FACECTL_STATE_DIR=/tmp was refused (right) with the fix `chmod 700 /tmp`, which would
// break every other user and program on the machine. A shared system directory is only ever left as it is.
describe.runIf((statSync('/tmp').mode & 0o1002) === 0o1002)('the system /tmp as the state or config directory', () => {
  it('FACECTL_STATE_DIR=/tmp -> exit 2, the fix is another directory, never chmod /tmp; nothing sent', async () => {
    const batch = tempFile('batch.ndjson', `${JSON.stringify({ alias: 'ada', label: 'x', content: 'hello' })}\n`);
    const before = server.requests.length;
    const result = await runCli(['docs', 'submit', '--file', batch], {
      env: { FACECTL_STATE_DIR: '/tmp', FACECTL_API_KEY: KEY, FACECTL_BASE_URL: server.baseUrl },
    });
    expect(result.code, result.stderr).toBe(ExitCode.usage);
    expect(result.stderr.trim().split('\n').at(-1)).toBe(
      'set FACECTL_STATE_DIR to a directory only you can write to (a missing one is made 0700); leave /tmp as it is: it is shared, others need to write to it',
    );
    expect(result.stderr).not.toContain('chmod');
    expect(server.requests.length).toBe(before);
  });

  it('FACECTL_CONFIG_DIR=/tmp -> exit 2, the same fix for the configuration; doctor says the same', async () => {
    const hint =
      'set FACECTL_CONFIG_DIR to a directory only you can write to (a missing one is made 0700); leave /tmp as it is: it is shared, others need to write to it';
    const result = await runCli(['config', 'set', 'base_url', 'http://127.0.0.1:6'], {
      env: { FACECTL_CONFIG_DIR: '/tmp' },
    });
    expect(result.code, result.stderr).toBe(ExitCode.usage);
    expect(result.stderr.trim().split('\n').at(-1)).toBe(hint);
    const doctor = await runCli(['doctor', '--json'], { env: { FACECTL_CONFIG_DIR: '/tmp' } });
    const checks = JSON.parse(doctor.stdout).checks as { name: string; fix?: string }[];
    expect(checks.find((check) => check.name === 'config file safety')?.fix).toBe(hint);
  });
});

/**
 * The bin run by an unprivileged user (as root, uid 65534, from a copy it can read: root opens any directory)
 * with a FACECTL_STATE_DIR of its own of mode 000, logged in (by environment) to the fault server.
 */
async function closedStateDir() {
  const cli = await unprivilegedCli();
  const state = join(cli.dir, 'state-000');
  mkdirSync(state, { mode: 0o700 });
  if (cli.asRoot) chownSync(state, 65534, 65534);
  chmodSync(state, 0o000);
  const batch = join(cli.dir, 'batch.ndjson');
  writeFileSync(batch, `${JSON.stringify({ alias: 'ada', label: 'x', content: 'hello' })}\n`, { mode: 0o644 });
  const run = (args: string[]) =>
    cli.run(args, { FACECTL_STATE_DIR: state, FACECTL_API_KEY: KEY, FACECTL_BASE_URL: server.baseUrl });
  return { state, batch, run };
}

// A newcomer's find: a FACECTL_STATE_DIR of mode 000: `docs submit --file` said "cannot write the batch record
// …/state/batches: permission denied", a directory that is not there rather than the one denied, and not whether
// anything was sent.
describe('a FACECTL_STATE_DIR of mode 000 (run as an unprivileged user)', () => {
  it('-> exit 1 naming that directory and its fix, saying nothing was sent; nothing sent or made (bin)', async () => {
    const { state, batch, run } = await closedStateDir();
    const before = server.requests.length;
    try {
      const message = `cannot write batch records in ${state}: permission denied, EACCES; nothing was sent`;
      const plain = await run(['docs', 'submit', '--file', batch]);
      expect(plain.code, plain.stderr).toBe(ExitCode.error);
      expect(plain.stdout).toBe('');
      expect(plain.stderr).toBe(
        `error: ${message}\ncheck the permissions of ${state} (\`chmod 700 ${state}\` if it is yours), or set FACECTL_STATE_DIR to a writable one\n`,
      );
      const resume = await run(['docs', 'submit', '--file', batch, '--resume', '--json']);
      expect(resume.code, resume.stderr).toBe(ExitCode.error);
      expect(JSON.parse(resume.stderr).error).toEqual({
        code: 'state_unwritable',
        message,
        hint: "make that directory writable for you again, then --resume with FACECTL_STATE_DIR as it is (where the batch's record is kept)",
      });
      expect(server.requests.length).toBe(before);

      // doctor says it in the same words, and fails.
      const doctor = await run(['doctor', '--json']);
      expect(doctor.code, doctor.stderr).toBe(1);
      expect(JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === 'state directory')).toEqual({
        name: 'state directory',
        status: 'fail',
        detail: `cannot write batch records in ${state}: permission denied, EACCES`,
        fix: `check the permissions of ${state} (\`chmod 700 ${state}\` if it is yours), or set FACECTL_STATE_DIR to a writable one`,
      });
      expect(JSON.parse(doctor.stderr).error.message).toBe('1 of 9 checks failed: state directory');
    } finally {
      chmodSync(state, 0o700);
    }
    expect(readdirSync(state)).toEqual([]);
  });
});

// A breaker's find: a finished record made unreadable (chmod 000) was said as "cannot write the batch record".
describe('a batch record of mode 000 (run as an unprivileged user)', () => {
  it('--resume -> exit 1 saying it cannot read that record, and the chmod that fixes it; nothing sent (bin)', async () => {
    const { state, batch, run } = await closedStateDir();
    chmodSync(state, 0o700);
    server.handle((req, res) =>
      json(res, 201, documentBody({ document_id: 'doc_1', alias: 'ada', label: 'x', source: 'api', content: '' })),
    );
    const first = await run(['docs', 'submit', '--file', batch]);
    expect(first.code, first.stderr).toBe(0);
    const records = join(state, 'batches');
    const [record] = readdirSync(records);
    chmodSync(join(records, record as string), 0o000);
    const before = server.requests.length;
    const again = await run(['docs', 'submit', '--file', batch, '--resume', '--json']);
    expect(again.code, again.stderr).toBe(ExitCode.error);
    expect(JSON.parse(again.stderr).error).toEqual({
      code: 'state_unreadable',
      message: `cannot read the batch record ${join(records, record as string)}: permission denied, EACCES; nothing was sent`,
      hint: `make it readable for you again (chmod 600 ${join(records, record as string)}): without it, lines that batch submitted could be sent again`,
    });
    expect(server.requests.length).toBe(before);
  });
});

// A newcomer's find: doctor never checked the state directory: with FACECTL_STATE_DIR a symlink to nothing, a file
// or a 0777 directory it said all was well (exit 0), and `docs submit --file` was then refused (exit 2).
describe('doctor checks the state directory as a batch does, in its words, making nothing', () => {
  it.each([
    [
      'a symlink to nothing',
      (parent: string) => {
        symlinkSync(join(parent, 'gone'), join(parent, 'state'));
        return {
          problem: `the state directory ${join(parent, 'state')} is a symlink to ${join(parent, 'gone')}, which does not exist`,
          fix: `create its target (\`mkdir -m 700 -p ${join(parent, 'gone')}\`) or remove the symlink (facectl then makes the directory), or set FACECTL_STATE_DIR to another directory`,
        };
      },
    ],
    [
      'a file',
      (parent: string) => {
        writeFileSync(join(parent, 'state'), 'mine\n');
        return {
          problem: `the state directory ${join(parent, 'state')} is not a directory (a file is where it, or a directory above it, would be)`,
          fix: `set FACECTL_STATE_DIR to a directory (a missing one is made), or move ${join(parent, 'state')} away`,
        };
      },
    ],
    [
      'a 0777 directory',
      (parent: string) => {
        mkdirSync(join(parent, 'state'));
        chmodSync(join(parent, 'state'), 0o777);
        return {
          problem: `the state directory ${join(parent, 'state')} has mode 0777: its group and everyone can write to it, and so plant links where facectl writes the records of your batches`,
          fix: `set FACECTL_STATE_DIR to a directory only you can write to (a missing one is made 0700); leave ${join(parent, 'state')} as it is: it is shared, others need to write to it`,
        };
      },
    ],
  ])('%s: docs submit is refused (exit 2) and doctor fails it the same (bin)', async (_name, make) => {
    const parent = makeTempDir('facectl-state-doctor-');
    const { problem, fix } = make(parent);
    const made = readdirSync(parent, { recursive: true });
    const env = { FACECTL_STATE_DIR: join(parent, 'state'), FACECTL_API_KEY: KEY, FACECTL_BASE_URL: server.baseUrl };
    const batch = tempFile('batch.ndjson', `${JSON.stringify({ alias: 'ada', label: 'x', content: 'hello' })}\n`);
    const before = server.requests.length;
    const submit = await runCli(['docs', 'submit', '--file', batch], { env });
    expect(submit.code, submit.stderr).toBe(ExitCode.usage);
    expect(submit.stderr).toBe(`error: refusing to write batch records: ${problem}; nothing was sent\n${fix}\n`);
    expect(server.requests.length).toBe(before);

    const doctor = await runCli(['doctor', '--json'], { env });
    expect(doctor.code, doctor.stderr).toBe(1);
    const checks = JSON.parse(doctor.stdout).checks as { name: string }[];
    expect(checks.find((check) => check.name === 'state directory')).toEqual({
      name: 'state directory',
      status: 'fail',
      detail: `refusing to write batch records: ${problem}`,
      fix,
    });
    expect(JSON.parse(doctor.stderr).error.message).toBe('1 of 9 checks failed: state directory');
    expect(readdirSync(parent, { recursive: true })).toEqual(made);
  });
});

import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentKeyBody, json } from '../helpers/fault-server.js';
import { makeConfigDir, runCli } from '../helpers/run-cli.js';
import { worldReadableCli } from '../helpers/world-readable-cli.js';
import { ensureBuilt, type FaultServer, KEY, startFaultServer, tempDir } from './support.js';

// Case 46 of docs/reliability.md: a config directory or file another user owns, or a config.json that
// is a symlink -> refused with the fix, nothing written through it, and doctor reports it. The tests
// run as root, so "another user" is simulated by chown to uid 65534 (nobody).

const NOBODY = 65534;
const OLD = '{\n\t"profiles": {\n\t\t"default": {\n\t\t\t"base_url": "http://127.0.0.1:5"\n\t\t}\n\t}\n}\n';

let server: FaultServer;
beforeAll(async () => {
  ensureBuilt();
  server = await startFaultServer((req, res) => {
    if (req.method === 'POST' && req.url === '/v1/auth/api-keys') {
      json(res, 201, { ...currentKeyBody(), key: 'fcs_newkey01_0123456789abcdef0123456789ab' });
    } else if (req.url === '/v1/auth/api-keys/current') json(res, 200, currentKeyBody());
    else json(res, 404, { detail: 'no', code: 'not_found' });
  });
});
afterAll(() => server.close());

/**
 * Making a file another user owns needs root (chown). As root (CI here) those tests run; run by any other
 * user, they are not declared, and one test below checks the same refusal against a directory root owns.
 */
const AS_ROOT = process.getuid?.() === 0;
const itAsRoot = AS_ROOT ? it : () => undefined;

/** The writers, each against a fresh copy of the situation `arrange` makes; what must stay unchanged. */
async function expectRefused(
  arrange: () => { dir: string; watched: string },
  problem: RegExp,
  fix: RegExp,
): Promise<void> {
  const writers: { args: string[]; stdin?: string; env?: Record<string, string> }[] = [
    { args: ['config', 'set', 'base_url', 'http://127.0.0.1:6'] },
    { args: ['auth', 'login', '--api-key-stdin'], stdin: `${KEY}\n`, env: { FACECTL_BASE_URL: server.baseUrl } },
    {
      args: ['keys', 'create', '--save'],
      env: { FACECTL_BASE_URL: server.baseUrl, FACECTL_API_KEY: KEY },
    },
  ];
  for (const writer of writers) {
    const { dir, watched } = arrange();
    const before = { text: readFileSync(watched, 'utf8'), uid: statSync(watched).uid };
    const sent = server.requests.length;
    const result = await runCli(writer.args, {
      env: { FACECTL_CONFIG_DIR: dir, ...writer.env },
      ...(writer.stdin ? { stdin: writer.stdin } : {}),
    });
    const label = writer.args.join(' ');
    // Refused before anything is written (keys create: before the key is made): exit 2, as for a corrupt file.
    expect(result.code, `${label}: ${result.stderr}`).toBe(2);
    expect(result.stderr, label).toMatch(/refusing to write/);
    expect(result.stderr, label).toMatch(problem);
    expect(result.stderr, label).toMatch(fix);
    expect(result.stderr, label).not.toMatch(/Saved key|Logged in/);
    // auth login: refused before its key check is sent, as keys create is before the key is made.
    expect(server.requests.slice(sent), label).toEqual([]);
    expect(readFileSync(watched, 'utf8'), label).toBe(before.text);
    expect(statSync(watched).uid, label).toBe(before.uid);

    const doctor = await runCli(['doctor', '--json'], { env: { FACECTL_CONFIG_DIR: dir } });
    const checks = JSON.parse(doctor.stdout).checks as { name: string; status: string; detail: string; fix: string }[];
    const safety = checks.find((c) => c.name === 'config file safety');
    expect(safety?.status).toBe('fail');
    expect(safety?.detail).toMatch(problem);
    expect(safety?.fix).toMatch(fix);
    expect(checks.find((c) => c.name === 'config file mode')).toBeUndefined();
  }
}

/** `facectl config set base_url http://127.0.0.1:6`: a write to the configuration. */
function setBaseUrl(env: Record<string, string | undefined>) {
  return runCli(['config', 'set', 'base_url', 'http://127.0.0.1:6'], { env });
}

/** A config directory `theirs` holding a config.json, owned by the other user (uid 65534). */
function theirDirectory(): string {
  const dir = join(makeConfigDir(), 'theirs');
  mkdirSync(dir, { mode: 0o755 });
  writeFileSync(join(dir, 'config.json'), OLD, { mode: 0o600 });
  chownSync(dir, NOBODY, NOBODY);
  return dir;
}

/** The CLI run by a real unprivileged user (uid 65534), as the copy in world-readable-cli lets it. */
async function runAsNobody(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  const cli = await worldReadableCli();
  return new Promise((resolve) => {
    const child = spawn(cli.node, [cli.bin, ...args], {
      uid: NOBODY,
      gid: NOBODY,
      cwd: cli.dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cli.dir, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('case 46: a config file or directory facectl must not write', () => {
  itAsRoot(
    "a real other user (uid 65534) given a shared, writable directory of root's -> refused, root's file untouched",
    async () => {
      const parent = tempDir();
      chmodSync(parent, 0o755); // reachable by the other user
      const dir = join(parent, 'shared');
      mkdirSync(dir);
      chmodSync(dir, 0o777);
      const path = join(dir, 'config.json');
      writeFileSync(path, OLD);
      chmodSync(path, 0o666);
      const result = await runAsNobody(['config', 'set', 'base_url', 'http://127.0.0.1:6'], {
        FACECTL_CONFIG_DIR: dir,
      });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(
        /configuration directory .*shared belongs to another user \(uid 0, you are 65534\)/,
      );
      expect(readFileSync(path, 'utf8')).toBe(OLD);
      expect(statSync(path).uid).toBe(0);
    },
  );

  itAsRoot(
    'config.json owned by another user -> refused with the fix; content and owner unchanged; doctor reports it',
    async () => {
      await expectRefused(
        () => {
          const dir = makeConfigDir();
          const path = join(dir, 'config.json');
          writeFileSync(path, OLD, { mode: 0o600 });
          chownSync(path, NOBODY, NOBODY);
          return { dir, watched: path };
        },
        /configuration file .*config\.json belongs to another user \(uid 65534, you are 0\)/,
        /sudo chown 0 .*config\.json/,
      );
    },
  );

  itAsRoot('a config directory owned by another user -> refused with the fix; doctor reports it', async () => {
    await expectRefused(
      () => {
        const dir = theirDirectory();
        return { dir, watched: join(dir, 'config.json') };
      },
      /configuration directory .*theirs belongs to another user \(uid 65534/,
      // Outside the home, another user's directory is never to be chown'ed: only another one is offered.
      /(^|\n)set FACECTL_CONFIG_DIR to a directory only you can write to \(a missing one is made 0700\); \/\S+\/theirs is not yours to change(\n|$)/,
    );
  });

  itAsRoot(
    'a config directory under the home owned by another user (a facectl run with sudo) -> take it back, or another',
    async () => {
      const home = makeConfigDir();
      const dir = join(home, '.config', 'facectl');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'config.json'), OLD, { mode: 0o600 });
      chownSync(dir, NOBODY, NOBODY);
      const result = await runCli(['config', 'set', 'base_url', 'http://127.0.0.1:6'], {
        env: { HOME: home, FACECTL_CONFIG_DIR: undefined },
      });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(
        `if it is yours, take it back (\`sudo chown -R 0 ${dir}\`); if it is theirs (facectl run with sudo?), run facectl as its owner, or set FACECTL_CONFIG_DIR to a directory only you can write to`,
      );
      expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe(OLD);
    },
  );

  itAsRoot("a config directory that is a symlink of mine to another user's directory -> refused", async () => {
    await expectRefused(
      () => {
        const theirs = theirDirectory();
        const dir = join(makeConfigDir(), 'link');
        symlinkSync(theirs, dir);
        return { dir, watched: join(theirs, 'config.json') };
      },
      /configuration directory .*link belongs to another user \(uid 65534/,
      /set FACECTL_CONFIG_DIR to a directory only you can write to .*link is not yours to change/,
    );
  });

  if (!AS_ROOT) {
    it("run as a user other than root: root's directory (/etc) as the config directory -> refused with the fix", async () => {
      const uid = process.getuid?.() ?? -1;
      await expectRefused(
        () => ({ dir: '/etc', watched: '/etc/passwd' }),
        new RegExp(`configuration directory /etc belongs to another user \\(uid 0, you are ${uid}\\)`),
        /or set FACECTL_CONFIG_DIR/,
      );
    });
  }

  it('a config directory that is a symlink to a directory of my own (a dotfile manager) is used as usual', async () => {
    const mine = makeConfigDir();
    const dir = join(makeConfigDir(), 'link');
    symlinkSync(mine, dir);
    const set = await setBaseUrl({ FACECTL_CONFIG_DIR: dir });
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(mine, 'config.json'), 'utf8'))).toEqual({
      profiles: { default: { base_url: 'http://127.0.0.1:6' } },
    });
  });

  it('config.json a symlink -> refused with the fix; its target is not written, the link stays; doctor reports it', async () => {
    let link = '';
    await expectRefused(
      () => {
        const dir = makeConfigDir();
        const target = join(tempDir(), 'elsewhere.json');
        writeFileSync(target, OLD, { mode: 0o600 });
        link = join(dir, 'config.json');
        symlinkSync(target, link);
        return { dir, watched: target };
      },
      /configuration file .*config\.json is a symlink \(to .*elsewhere\.json\); facectl does not write through it/,
      /replace it with a regular file/,
    );
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });
});

// A ring's find: FACECTL_CONFIG_DIR naming a file gave auth login exit 1 "cannot write configuration file ...
// (ENOTDIR) ... check ... and its disk", where the README says exit 2 and the state directory's case says so.
describe('a FACECTL_CONFIG_DIR that is not a directory', () => {
  it.each([
    ['a file', (file: string) => file],
    ['under a file', (file: string) => join(file, 'facectl')],
  ])('%s -> exit 2 naming it, with the fix; the file untouched, nothing sent', async (_name, configDir) => {
    const file = join(tempDir(), 'afile');
    writeFileSync(file, 'mine\n');
    const dir = configDir(file);
    for (const writer of [...configWriters(), { args: ['config', 'get', 'base_url'] }]) {
      const label = writer.args.join(' ');
      const sent = server.requests.length;
      const result = await runWriter(writer, dir);
      expect(result.code, `${label}: ${result.stderr}`).toBe(2);
      expect(result.stderr, label).toContain(
        `error: FACECTL_CONFIG_DIR ${dir} is not a directory (a file is where it, or a directory above it, would be)`,
      );
      // The file in the way named, the directory or one above it (a ring's find: "that file", unnamed).
      expect(result.stderr, label).toContain(
        `set FACECTL_CONFIG_DIR to a directory (a missing one is made), or move ${file} away`,
      );
      expect(result.stderr, label).not.toMatch(/ENOTDIR|its disk|Logged in|Saved key/);
      expect(server.requests.slice(sent), label).toEqual([]);
      expect(readFileSync(file, 'utf8'), label).toBe('mine\n');
    }
  });
});

// A breaker's find: FACECTL_CONFIG_DIR a symlink to nothing: doctor said config.json "does not exist yet" and
// failed no check, while `config set` failed with "(ENOENT) ... check ... and its disk".
describe('a FACECTL_CONFIG_DIR that is, or is under, a symlink to nothing', () => {
  it.each([
    ['the symlink', (link: string) => link, ''],
    ['under the symlink', (link: string) => join(link, 'facectl'), 'under LINK, '],
  ])(
    '%s -> writers refused with exit 2 naming the symlink, nothing made or sent; doctor fails it the same',
    async (_name, configDir, under) => {
      const parent = tempDir();
      const link = join(parent, 'cfg');
      const target = join(parent, 'gone');
      symlinkSync(target, link);
      const dir = configDir(link);
      const problem = `the configuration directory ${dir} is ${under.replace('LINK', link)}a symlink to ${target}, which does not exist`;
      const fix = `create its target (\`mkdir -m 700 -p ${target}\`) or remove the symlink (facectl then makes the directory), or set FACECTL_CONFIG_DIR to another directory`;
      for (const writer of configWriters()) {
        const label = writer.args.join(' ');
        const sent = server.requests.length;
        const result = await runWriter(writer, dir);
        expect(result.code, `${label}: ${result.stderr}`).toBe(2);
        expect(result.stdout, label).toBe('');
        expect(result.stderr, label).toBe(`error: refusing to write: ${problem}; nothing was written\n${fix}\n`);
        expect(server.requests.slice(sent), label).toEqual([]);
        expect(readdirSync(parent), label).toEqual(['cfg']);
        expect(lstatSync(link).isSymbolicLink(), label).toBe(true);
      }

      // The state directory elsewhere: beside the configuration (runCli's default) it is under the link too.
      const doctor = await runCli(['doctor', '--json'], {
        env: {
          FACECTL_CONFIG_DIR: dir,
          FACECTL_STATE_DIR: join(tempDir(), 'state'),
          FACECTL_API_KEY: KEY,
          FACECTL_BASE_URL: server.baseUrl,
        },
      });
      expect(doctor.code, doctor.stderr).toBe(1);
      const checks = JSON.parse(doctor.stdout).checks as { name: string; status: string }[];
      expect(checks.find((c) => c.name === 'config file safety')).toEqual({
        name: 'config file safety',
        status: 'fail',
        detail: problem,
        fix,
      });
      expect(JSON.parse(doctor.stderr).error.message).toBe('1 of 10 checks failed: config file safety');
      // Not "does not exist yet (`facectl auth login` creates it)" above the row that says it would be refused.
      const configRow = {
        name: 'config file',
        status: 'warn',
        detail: `${join(dir, 'config.json')} does not exist yet, and cannot be made there`,
        fix: 'see "config file safety"',
      };
      expect(checks.find((c) => c.name === 'config file')).toEqual(configRow);
      // With no key, the key's rows send there too, not to `facectl auth login` (refused the same way).
      const keyless = await runCli(['doctor', '--json'], {
        env: { FACECTL_CONFIG_DIR: dir, FACECTL_STATE_DIR: join(tempDir(), 'state'), FACECTL_BASE_URL: server.baseUrl },
      });
      expect(keyless.code, keyless.stderr).toBe(1);
      const rows = JSON.parse(keyless.stdout).checks as { name: string; status: string; fix: string }[];
      expect(rows.find((c) => c.name === 'config file')).toEqual(configRow);
      expect(rows.find((c) => c.name === 'key source')?.fix).toBe('see "config file safety" (or set FACECTL_API_KEY)');
      expect(rows.find((c) => c.name === 'key works')).toEqual({
        name: 'key works',
        status: 'warn',
        detail: 'not checked: no API key for this base URL',
        fix: 'see "config file safety"',
      });
      expect(JSON.parse(keyless.stderr).error.message).toBe('2 of 10 checks failed: config file safety, key source');
      expect(readdirSync(parent)).toEqual(['cfg']);
    },
  );
});

// A FACECTL_CONFIG_DIR that group or others can write to was written into and left so (README says the
// directory is 0700), and doctor only warned that others could list it.
describe('a config directory its group or others can write to', () => {
  // Only a directory of the user's own that just its group can write to is fixed by `chmod 700`; one
  // shared with everyone (or sticky, as /tmp) is left as it is, and the fix is another directory.
  const SHARED_FIX =
    /set FACECTL_CONFIG_DIR to a directory only you can write to \(a missing one is made 0700\); leave \/.*facectl-cfg-\S+ as it is: it is shared, others need to write to it/;
  it.each([
    ['0777', SHARED_FIX],
    ['1777', SHARED_FIX],
    ['0770', /chmod 700 \/.*facectl-cfg-/],
    ['0702', SHARED_FIX],
  ])(
    'mode %s -> refused with the fix (`chmod 700 DIR` only for a group-writable one), the file and the mode unchanged; doctor fails it',
    async (shown, fix) => {
      const dirMode = Number.parseInt(shown, 8);
      const dirs: string[] = [];
      await expectRefused(
        () => {
          const dir = makeConfigDir();
          const path = join(dir, 'config.json');
          writeFileSync(path, OLD, { mode: 0o600 });
          chmodSync(dir, dirMode);
          dirs.push(dir);
          return { dir, watched: path };
        },
        new RegExp(
          `configuration directory .* has mode ${shown}: .* can write to it, and so replace the stored configuration`,
        ),
        fix,
      );
      for (const dir of dirs) expect(statSync(dir).mode & 0o7777).toBe(dirMode);
    },
  );

  it('with no config.json yet -> nothing is created in it', async () => {
    const dir = makeConfigDir();
    chmodSync(dir, 0o777);
    const result = await setBaseUrl({ FACECTL_CONFIG_DIR: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `the configuration directory ${dir} has mode 0777: its group and everyone can write to it`,
    );
    expect(result.stderr).toContain(
      `set FACECTL_CONFIG_DIR to a directory only you can write to (a missing one is made 0700); leave ${dir} as it is: it is shared, others need to write to it`,
    );
    expect(result.stderr).not.toContain('chmod');
    expect(readdirSync(dir)).toEqual([]);
    expect(statSync(dir).mode & 0o777).toBe(0o777);
  });

  it('the per-user directory (no FACECTL_CONFIG_DIR) left 0777 by another tool is made 0700, then written', async () => {
    const home = makeConfigDir();
    const dir = join(home, '.config', 'facectl');
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777);
    const result = await setBaseUrl({ HOME: home, FACECTL_CONFIG_DIR: undefined, XDG_CONFIG_HOME: undefined });
    expect(result.code, result.stderr).toBe(0);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toMatchObject({
      profiles: { default: { base_url: 'http://127.0.0.1:6' } },
    });
  });

  it('mode 0755 (others may list it, not write) is still used, and doctor only warns', async () => {
    const dir = makeConfigDir();
    chmodSync(dir, 0o755);
    const result = await setBaseUrl({ FACECTL_CONFIG_DIR: dir });
    expect(result.code, result.stderr).toBe(0);
    const doctor = await runCli(['doctor', '--json'], { env: { FACECTL_CONFIG_DIR: dir } });
    const checks = JSON.parse(doctor.stdout).checks as { name: string; status: string }[];
    expect(checks.find((c) => c.name === 'config file safety')).toBeUndefined();
    expect(checks.find((c) => c.name === 'config directory mode')?.status).toBe('warn');
  });
});

// A config.json that is a FIFO hung `config list` and `config set` for ever; one linked to /dev/zero was
// read without end; a huge one was read whole into memory. Each is now refused at once, exit 2, with the fix.
describe('a config.json that is not a regular file, or too large to be a configuration', () => {
  const CAP = 16 * 1024 * 1024;

  async function expectUnread(arrange: (path: string) => void, problem: RegExp, fix: RegExp): Promise<void> {
    for (const args of [
      ['config', 'list'],
      ['config', 'set', 'base_url', 'http://127.0.0.1:6'],
      ['doctor', '--json'],
    ]) {
      const dir = makeConfigDir();
      const path = join(dir, 'config.json');
      arrange(path);
      const before = lstatSync(path);
      const result = await runCli(args, { env: { FACECTL_CONFIG_DIR: dir }, timeoutMs: 15_000 });
      const label = args.join(' ');
      expect(result.timedOut, label).toBe(false);
      if (args[0] === 'doctor') {
        expect(result.code, label).toBe(1);
        const checks = JSON.parse(result.stdout).checks as { name: string; status: string; detail: string }[];
        const check = checks.find((c) => c.name === 'config file');
        expect(check?.status, label).toBe('fail');
        expect(check?.detail, label).toMatch(problem);
      } else {
        expect(result.code, `${label}: ${result.stderr}`).toBe(2);
        expect(result.stderr, label).toMatch(problem);
        expect(result.stderr, label).toMatch(fix);
      }
      // Left as it was: nothing renamed over it.
      const after = lstatSync(path);
      expect([after.ino, after.size, after.mode & 0o170000], label).toEqual([
        before.ino,
        before.size,
        before.mode & 0o170000,
      ]);
    }
  }

  it('a FIFO -> refused at once naming it, never a hang (config list, config set, doctor)', async () => {
    await expectUnread(
      (path) => execFileSync('mkfifo', [path]),
      /configuration file .*config\.json is not a regular file \(it is a FIFO\); facectl reads only a regular file/,
      /remove .*config\.json \(or replace it with a regular file\)/,
    );
  });

  it('a symlink to /dev/zero -> refused at once, never read (config list, config set, doctor)', async () => {
    await expectUnread(
      (path) => symlinkSync('/dev/zero', path),
      /configuration file .*config\.json is not a regular file \(it is a character device\)/,
      /remove .*config\.json \(or replace it with a regular file\)/,
    );
  });

  it('a file over 16 MiB -> refused by its size, not read (config list, config set, doctor)', async () => {
    await expectUnread(
      (path) => writeFileSync(path, `{"profiles":{}}${' '.repeat(CAP)}`, { mode: 0o600 }),
      /configuration file .*config\.json is 16777231 bytes, over the 16777216 bytes \(16 MiB\) a configuration file may have/,
      /check what wrote .*config\.json, then fix or remove it/,
    );
  });

  it('a file of exactly 16 MiB is still read', async () => {
    const dir = makeConfigDir();
    const text = '{"profiles":{"default":{"base_url":"http://127.0.0.1:5"}}}';
    writeFileSync(join(dir, 'config.json'), text + ' '.repeat(CAP - text.length), { mode: 0o600 });
    const result = await runCli(['config', 'get', 'base_url'], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('http://127.0.0.1:5');
  });
});

type Writer = { args: string[]; stdin?: string; env?: Record<string, string> };

/** The commands that write the configuration file, each as a script runs it (a key on stdin or in the environment). */
function configWriters(): Writer[] {
  return [
    { args: ['config', 'set', 'base_url', 'http://127.0.0.1:6'] },
    { args: ['auth', 'login', '--api-key-stdin'], stdin: `${KEY}\n`, env: { FACECTL_BASE_URL: server.baseUrl } },
    { args: ['keys', 'create', '--save'], env: { FACECTL_BASE_URL: server.baseUrl, FACECTL_API_KEY: KEY } },
  ];
}

const runWriter = (writer: Writer, dir: string) =>
  runCli(writer.args, {
    env: { FACECTL_CONFIG_DIR: dir, ...writer.env },
    ...(writer.stdin ? { stdin: writer.stdin } : {}),
  });

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/run-cli.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { useFaultServer } from '../helpers/hooks.js';
import { slowProxy } from '../helpers/slow-proxy.js';
import { runCli } from '../helpers/run-cli.js';
import { batchEnv, batchFile, storedLabels, tempFile, until } from './support.js';

// A batch whose journal can no longer be written (a full disk; here the process's file size limit, as
// `ulimit -f` sets it, with SIGXFSZ ignored so the write fails with EFBIG) stops sending: a line sent
// then could not be recorded as acknowledged. Before, it sent every line and failed only at the end.

const service = useService({}, { faces: ['ada-full'] });
const proxyServer = useFaultServer();
beforeAll(() => ensureBuilt(), 120_000);

/** `docs submit` with a file size limit of `blocks` 512-byte blocks (stdout to /dev/null: no limit there). */
function limited(args: string[], env: Record<string, string>, blocks: number, stdin?: string) {
  const command = `trap '' XFSZ; ulimit -f ${blocks}; exec "$0" "$@" > /dev/null`;
  const child = spawn('sh', ['-c', command, process.execPath, BIN, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      NO_COLOR: '1',
      // Where runCli keeps it too, for the --resume below.
      FACECTL_STATE_DIR: join(env.FACECTL_CONFIG_DIR as string, 'state'),
      ...env,
    },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'],
  });
  child.stdin?.end(stdin);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr })),
  );
}

/** Every file below `dir` deleted, its directories left. */
function deleteFiles(dir: string): void {
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (statSync(path, { throwIfNoEntry: false })?.isFile()) rmSync(path, { force: true });
  }
}

const REMOVED = expect.stringMatching(
  /^cannot write the batch record .*: it was removed or moved while the batch ran \(ENOENT\)$/,
);
const LATER = 'a later run of this input sends every line again';

/** 20 lines through a proxy that holds the answers after two: `remove` runs then, the answers go on `afterMs` later. */
async function removedMidBatch(
  label: string,
  remove: (stateDir: string) => void,
  afterMs: number,
  flags: string[] = [],
) {
  const { file } = batchFile('ada-full', label, 20);
  const env = batchEnv(service.key('pro'), service.baseUrl);
  const proxy = slowProxy(proxyServer, service.baseUrl, 0);
  proxy.holdAfter(2);
  const stateDir = join(env.FACECTL_CONFIG_DIR, 'state');
  const running = runCli(['docs', 'submit', '--file', file, '--json', ...flags], {
    env: { ...env, FACECTL_BASE_URL: proxyServer.baseUrl, FACECTL_STATE_DIR: stateDir },
  });
  await until(() => proxy.answered() >= 2, 'two answers');
  remove(stateDir);
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  proxy.release();
  const res = await running;
  const error = JSON.parse(res.stderr.trim().split('\n').at(-1) as string).error as unknown;
  return { res, error, file, env: { ...env, FACECTL_STATE_DIR: stateDir } };
}

describe('a batch whose journal cannot be written', () => {
  it.each([
    ['its state directory', (dir: string) => rmSync(dir, { recursive: true, force: true })],
    ['the files in it (`find -type f -delete`)', (dir: string) => deleteFiles(dir)],
  ])(
    '%s removed while it sends: stops, exit 1, said as the removal (not exit 5, another run, --resume)',
    async (_, remove) => {
      // A ring's find: the lock's heartbeat called it "taken over by another process", exit 5, with a --resume hint
      // that found nothing, and a plain run then created again the 84 documents sent.
      const label = `gone-${randomUUID().slice(0, 8)}-`;
      // Answered at once after the removal: it is seen at the next line sent, not at the lock's heartbeat (3.3 s).
      const { res, error } = await removedMidBatch(label, remove, 0, ['--concurrency', '1']);
      expect(res.code, res.stderr).toBe(1);
      expect(error).toMatchObject({ code: 'state_unwritable', message: REMOVED, hint: expect.stringContaining(LATER) });
      expect(res.stderr).not.toContain('taken over');
      // It stopped sending: the line in flight at most, after the two.
      expect(storedLabels(service, label).length).toBeLessThanOrEqual(3);
    },
    60_000,
  );

  it('its state directory removed while 8 lines are in flight: those answered, no more sent, exit 1, and no hint of a --resume that has no record', async () => {
    // A breaker's find: the error ended in a bare ENOENT and "check ... and its disk". Another: noticed only at the
    // lock's heartbeat, a batch went on sending (2,998 of 3,000 lines) to a record already gone.
    const remove = (dir: string) => rmSync(dir, { recursive: true, force: true });
    const { res, error } = await removedMidBatch('removed-', remove, 0, ['--concurrency', '8']);
    expect(res.code, res.stderr).toBe(1);
    expect(error).toMatchObject({
      code: 'state_unwritable',
      message: REMOVED,
      hint: `moved, put it back where it was and --resume; removed, the batch's record went with it: this run's results say what it submitted, and ${LATER}`,
    });
    // The two answered before and those in flight then (up to 8); no line taken after the removal is sent.
    const stored = storedLabels(service, 'removed-').length;
    expect(stored).toBeGreaterThanOrEqual(2);
    expect(stored).toBeLessThanOrEqual(10);
    const results = res.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { ok: boolean });
    expect(results.filter((result) => result.ok)).toHaveLength(stored);
  }, 60_000);

  it('its state directory moved away while it sends: stops at the next line; moved back, --resume makes each line once', async () => {
    // A breaker's find: writes went on to the moved record, and the batch sent 534-1,516 lines more before its lock
    // said so, with a hint that the record was gone.
    const label = `moved-${randomUUID().slice(0, 8)}-`;
    const away = (dir: string) => renameSync(dir, `${dir}.away`);
    const { res, error, file, env } = await removedMidBatch(label, away, 0, ['--concurrency', '1']);
    expect(res.code, res.stderr).toBe(1);
    expect(error).toMatchObject({ code: 'state_unwritable', message: REMOVED });
    expect(storedLabels(service, label).length).toBeLessThanOrEqual(3);
    renameSync(`${env.FACECTL_STATE_DIR}.away`, env.FACECTL_STATE_DIR);
    const resumed = await runCli(['docs', 'submit', '--file', file, '--resume'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    const all = storedLabels(service, label);
    expect(all).toHaveLength(20);
    expect(new Set(all).size).toBe(20);
  }, 60_000);

  it('a write of sent keys cut short by the limit: none of its lines is sent, and --resume with room makes each once', async () => {
    // A breaker's find: a write cut short returns what it wrote, without an error; the lines whose keys it cut were
    // sent all the same (32 of them), and a copy of the file then made them twice.
    const { file } = batchFile('ada-full', 'cutkeys-', 200);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    // 10 blocks: the header (the keys of the first 100 lines, about 4 KB) fits, 64 lines' keys do not.
    const cut = await limited(['docs', 'submit', '--file', file, '--concurrency', '64', '--json'], env, 10);
    expect(cut.code, cut.stderr).toBe(1);
    expect(JSON.parse(cut.stderr.trim().split('\n').at(-1) as string).error.message).toMatch(/EFBIG$/);
    const [record] = readdirSync(join(env.FACECTL_CONFIG_DIR, 'state', 'batches')).filter((n) => n.endsWith('.ndjson'));
    const text = readFileSync(join(env.FACECTL_CONFIG_DIR, 'state', 'batches', record as string), 'utf8');
    const keys = text.split('\n').filter((line) => /^\{"sent":"[0-9a-f.]+"\}$/.test(line)).length;
    expect(storedLabels(service, 'cutkeys-').length).toBeLessThanOrEqual(keys);
    const resumed = await runCli(['docs', 'submit', '--file', file, '--resume'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    const all = storedLabels(service, 'cutkeys-');
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
  }, 60_000);

  it('not even started: nothing sent, exit 1, and the hint does not send the user to a --resume', async () => {
    const { file } = batchFile('ada-full', 'unstarted-', 10);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const cut = await limited(['docs', 'submit', '--file', file, '--json'], env, 0);
    expect(cut.code, cut.stderr).toBe(1);
    const error = JSON.parse(cut.stderr.trim().split('\n').at(-1) as string).error;
    expect(error.code).toBe('state_unwritable');
    expect(error.message).toMatch(/: a file size limit was reached, EFBIG$/);
    expect(error.hint).toBe('raise the limit (ulimit -f), or set FACECTL_STATE_DIR to a directory on another disk');
    expect(storedLabels(service, 'unstarted-')).toEqual([]);
  }, 60_000);

  it('stops sending, exit 1 naming the journal; --resume with room again sends the rest, each line once', async () => {
    const total = 3000;
    const { file } = batchFile('ada-full', 'full-', total);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    // 16 blocks: the journal's header (with the keys of the file's first 100 lines) and a few dozen records fit,
    // then writes fail.
    const cut = await limited(['docs', 'submit', '--file', file, '--json'], env, 16);
    expect(cut.code, cut.stderr).toBe(1);
    const error = JSON.parse(cut.stderr.trim().split('\n').at(-1) as string).error;
    expect(error.code).toBe('state_unwritable');
    expect(error.message).toMatch(/^cannot write the batch record .*: a file size limit was reached, EFBIG$/);
    // The batch's record is in this state directory: a --resume with another one would send every line again.
    expect(error.hint).toBe(
      "raise the file size limit (ulimit -f), then --resume with FACECTL_STATE_DIR as it is (the batch's record is there)",
    );
    const sent = storedLabels(service, 'full-');
    expect(new Set(sent).size).toBe(sent.length);
    expect(sent.length).toBeLessThan(total);

    // --resume with the disk still full fails at its start: the fix again keeps the record where it is (a
    // ring followed an offer of another directory there, and --resume sent every line a second time).
    const stillFull = await limited(['docs', 'submit', '--file', file, '--json', '--resume'], env, 4);
    expect(stillFull.code, stillFull.stderr).toBe(1);
    const again = JSON.parse(stillFull.stderr.trim().split('\n').at(-1) as string).error;
    expect(again.code).toBe('state_unwritable');
    expect(again.hint).toBe(
      "raise the file size limit (ulimit -f), then --resume with FACECTL_STATE_DIR as it is (the batch's record is there)",
    );
    expect(storedLabels(service, 'full-')).toHaveLength(sent.length);

    const resumed = await runCli(['docs', 'submit', '--file', file, '--json', '--resume'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    const all = storedLabels(service, 'full-');
    expect(all).toHaveLength(total);
    expect(new Set(all).size).toBe(total);
  }, 120_000);

  it("standard input's record, whose first line alone outgrows the limit: refused before anything is sent", async () => {
    // Its first line holds the hashes of the input's first lines (about 4 KB for 100): cut short, a
    // --resume would not know the batch and would send every line again under new keys.
    const { lines } = batchFile('ada-full', 'fullin-', 300);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const cut = await limited(['docs', 'submit', '-', '--json'], env, 4, `${lines.join('\n')}\n`);
    expect(cut.code, cut.stderr).toBe(1);
    expect(JSON.parse(cut.stderr.trim().split('\n').at(-1) as string).error.code).toBe('state_unwritable');
    expect(storedLabels(service, 'fullin-')).toEqual([]);
    // The header's temporary file goes with the failure.
    const batches = join(env.FACECTL_CONFIG_DIR, 'state', 'batches');
    expect(readdirSync(batches).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    // No record was made: --resume finds none (refused, nothing sent); a plain run sends every line once.
    const resumed = await runCli(['docs', 'submit', '-', '--json', '--resume'], {
      env,
      stdin: `${lines.join('\n')}\n`,
    });
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(JSON.parse(resumed.stderr).error.code).toBe('nothing_to_resume');
    expect(storedLabels(service, 'fullin-')).toEqual([]);
    const plain = await runCli(['docs', 'submit', '-', '--json'], { env, stdin: `${lines.join('\n')}\n` });
    expect(plain.code, plain.stderr).toBe(0);
    const all = storedLabels(service, 'fullin-');
    expect(all).toHaveLength(300);
    expect(new Set(all).size).toBe(300);
  }, 120_000);
});

// A journal that cannot be made for another reason than the permissions (a read-only file system, an I/O
// error), injected by a preload at its open: said as a configuration write's failure is, with its own
// fix; before, every one of them said "check the permissions of that directory".
describe('a batch whose journal cannot be made', () => {
  it.each([
    [
      'EROFS',
      'read-only file system, EROFS',
      /^\/\S+ is on a read-only file system: set FACECTL_STATE_DIR to a writable directory/,
    ],
    ['EIO', 'EIO', /^check \/\S+ and its disk, or set FACECTL_STATE_DIR to another directory/],
    ['EACCES', 'permission denied, EACCES', /^check the permissions of that directory/],
  ])(
    '%s -> exit 1 saying so, with its own fix (the permissions only for EACCES); nothing sent',
    async (code, what, fix) => {
      const { file } = batchFile('ada-full', `ro-${code}-`, 3);
      const env = batchEnv(service.key('pro'), service.baseUrl);
      const preload = tempFile(
        'inject.cjs',
        `const fsp = require('node:fs/promises');
const { open } = fsp;
fsp.open = function (file, ...rest) {
  if (String(file).includes('/batches/')) {
    return Promise.reject(Object.assign(new Error('${code}: injected'), { code: '${code}', syscall: 'open' }));
  }
  return open.call(this, file, ...rest);
};
`,
      );
      const result = await runCli(['docs', 'submit', '--file', file, '--json'], {
        env: { ...env, NODE_OPTIONS: `--require ${preload}` },
      });
      expect(result.code, result.stderr).toBe(1);
      const error = JSON.parse(result.stderr.trim().split('\n').at(-1) as string).error;
      expect(error.code).toBe('state_unwritable');
      expect(error.message).toMatch(new RegExp(`^cannot write the batch record \\S+/batches/\\S+: ${what}$`));
      expect(error.hint).toMatch(fix);
      if (code !== 'EACCES') expect(error.hint).not.toContain('permissions');
      expect(storedLabels(service, `ro-${code}-`)).toEqual([]);
    },
  );
});

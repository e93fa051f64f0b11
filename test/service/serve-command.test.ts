import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { request as httpRequest } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { parseServeOptions, runServe } from '../../src/commands/serve-run.js';
import type { Context } from '../../src/context.js';
import { CancelError, CliError, ExitCode, UsageError } from '../../src/errors.js';
import { type ImportFetcher, startService } from '../../src/service/index.js';
import { Store } from '../../src/service/store.js';
import Database from 'libsql';
import { documentLoad } from '../helpers/document-load.js';
import { BIN, ROOT, runCli } from '../helpers/run-cli.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { call, expectContract, startTestService, storedAliases, tempDir } from '../helpers/service.js';
import { makeTempDir } from '../helpers/temp.js';
import { worldReadableCli } from '../helpers/world-readable-cli.js';
import { until, watchChild } from '../helpers/watch-child.js';

/** `facectl serve`: flags, output, shutdown; and the built bin, including kill -9 under load (case 41). */

beforeAll(() => ensureBuilt(), 120_000);

/** The smallest Context runServe needs: captured stdout/stderr, a signal, globals. */
function fakeContext(json = false) {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) =>
    new Writable({
      write(chunk, _enc, done) {
        into.push(String(chunk));
        done();
      },
    });
  const controller = new AbortController();
  const ctx = {
    io: { stdout: sink(out), stderr: sink(err) },
    globals: { json, noInput: true, debug: false, insecureHttp: false },
    signal: controller.signal,
    out: {
      json,
      line: (value: unknown) => out.push(`${JSON.stringify(value)}\n`),
      text: (text: string) => out.push(text),
      info: (message: string) => err.push(`${message}\n`),
    },
  } as unknown as Context;
  // stop(reason): as createProcessContext aborts on a signal (a CancelError) or a failed stdout.
  return {
    ctx,
    stop: (reason?: unknown) => controller.abort(reason),
    stdout: () => out.join(''),
    stderr: () => err.join(''),
  };
}

describe('flags', () => {
  const ctx = fakeContext().ctx;
  test.each([
    [{ port: '-1' }, '--port'],
    [{ port: '65536' }, '--port'],
    [{ port: 'abc' }, '--port'],
    [{ port: '1.5' }, '--port'],
    [{ rateLimit: '0' }, '--rate-limit'],
    [{ rateLimit: '-2' }, '--rate-limit'],
    [{ rateLimit: 'fast' }, '--rate-limit'],
    [{ rateLimit: '2.5' }, '--rate-limit'],
    [{ oauthProvider: 'Bad Name' }, '--oauth-provider'],
    [{ host: '' }, '--host'],
    [{ data: '/nonexistent-facectl-dir/state.json' }, '--data: /nonexistent-facectl-dir/state.json: the directory'],
  ])('%o is a usage error naming %s', (opts, flag) => {
    expect(() => parseServeOptions(ctx, opts)).toThrow(UsageError);
    expect(() => parseServeOptions(ctx, opts)).toThrow(flag);
  });

  test('the messages say what is allowed and quote what was given; every bad flag is named', () => {
    const message = (opts: Record<string, unknown>) => {
      try {
        parseServeOptions(ctx, opts);
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        return (error as UsageError).message;
      }
      throw new Error('no usage error');
    };
    expect(message({ port: '70000' })).toBe('--port: must be a whole number from 0 to 65535, got "70000"');
    expect(message({ rateLimit: '0' })).toBe(
      '--rate-limit: must be a whole number of requests per second, 1 or more, got "0"',
    );
    expect(message({ oauthProvider: 'Bad Name' })).toBe(
      '--oauth-provider: must be lower-case letters, digits, - or _ (at most 64), got "Bad Name"',
    );
    expect(message({ host: 'a b' })).toBe('--host: not a host name or address: "a b"');
    expect(message({ data: '' })).toBe('--data: needs a file path');
    expect(message({ port: 'x', rateLimit: 'fast' }).split('\n')).toEqual([
      '--port: must be a whole number from 0 to 65535, got "x"',
      '--rate-limit: must be a whole number of requests per second, 1 or more, got "fast"',
    ]);
  });

  test('without flags (a direct call) the defaults are those commander fills in', () => {
    const options = parseServeOptions(ctx, {});
    expect(options).toMatchObject({ host: '127.0.0.1', port: 8787, oauthProvider: 'example', allowPrivateUrls: false });
    expect(options.dataFile).toBeUndefined();
    expect(options.rateLimit).toBeUndefined();
  });

  test('valid flags', () => {
    expect(parseServeOptions(ctx, { port: '0', rateLimit: '5', data: 'x.json', oauthProvider: 'acme' })).toMatchObject({
      port: 0,
      rateLimit: 5,
      oauthProvider: 'acme',
      dataFile: join(process.cwd(), 'x.json'),
    });
  });
});

describe('runServe in-process', () => {
  test('--json prints one JSON line first, serves until the signal aborts, then stops cleanly (Ctrl-C: exit 0)', async () => {
    const t = fakeContext(true);
    const done = runServe(t.ctx, { port: '0', json: true }, { onStop: () => () => {} });
    await expect.poll(() => t.stdout()).toContain('\n');
    const first = JSON.parse(t.stdout().split('\n')[0] as string);
    expect(first.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.users.map((u: { plan: string }) => u.plan)).toEqual(['free', 'standard', 'pro', 'connect']);
    const res = await call({ baseUrl: first.base_url }, 'getCurrentApiKey', { key: first.users[3].key });
    expect(expectContract('getCurrentApiKey', res, 200).plan).toBe('connect');
    t.stop();
    await expect(done).resolves.toBeUndefined();
    expect(t.stderr()).toBe('facectl serve stopped\n');
    await expect(fetch(first.base_url)).rejects.toThrow();
  });

  /** runServe in this process on a data file, under --json, stopped as SIGINT/SIGTERM would stop it; once it listens. */
  async function serveOnDataFile(file: string) {
    const t = fakeContext(true);
    const done = runServe(t.ctx, { port: '0', json: true, data: file }, { onStop: () => () => {} });
    await expect.poll(() => t.stdout()).toContain('\n');
    const reasons = {
      SIGINT: new CancelError(),
      SIGTERM: new CancelError('terminated', { exitCode: ExitCode.terminated }),
    };
    return { t, done, stop: (signal: 'SIGINT' | 'SIGTERM') => t.stop(reasons[signal]) };
  }

  test('--json: the service\'s own failure lines are `{"warning": …}` JSON lines, like every command\'s', async () => {
    const t = fakeContext(true);
    const failing: ImportFetcher = async () => {
      throw new Error('the fetcher broke');
    };
    const done = runServe(t.ctx, { port: '0', json: true }, { onStop: () => () => {}, service: { fetchUrl: failing } });
    await expect.poll(() => t.stdout()).toContain('\n');
    const first = JSON.parse(t.stdout().split('\n')[0] as string);
    const key = first.users[2].key as string;
    await createFaceAsPro(first, 'warned-face', 'W');
    const res = await call({ baseUrl: first.base_url }, 'importIntoFace', {
      key,
      params: { face_id: 'warned-face' },
      body: { url: 'https://example.test/' },
    });
    expect(res.status).toBe(422);
    t.stop();
    await expect(done).resolves.toBeUndefined();
    // The service's line is JSON; the stop message after it goes through ctx.out (held for the error document).
    const [line] = t.stderr().split('\n');
    expect(JSON.parse(line as string)).toEqual({ warning: 'import of a URL failed unexpectedly: the fetcher broke' });
  });

  test.each([
    ['SIGTERM', 'terminated'],
    ['SIGINT', 'interrupted'],
  ] as const)('stopped by %s: saves first, then ends with success', async (signal, message) => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'state.json');
    try {
      const { t, done, stop } = await serveOnDataFile(file);
      const first = JSON.parse(t.stdout().split('\n')[0] as string);
      await createFaceAsPro(first, `${message}-face`, 'T');
      stop(signal);
      await expect(done).resolves.toBeUndefined();
      expect(t.stderr()).toBe(`facectl serve stopped; state saved to ${file}\n`);
      // Closed cleanly: the WAL is folded into the file, which stands alone.
      expect(readdirSync(tmp.dir)).toEqual(['state.json']);
      expect(storedAliases(file)).toContain(`${message}-face`);
    } finally {
      tmp.cleanup();
    }
  });

  test('stopped by a failed standard output: saves, then ends with that failure', async () => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'state.json');
    try {
      const { t, done } = await serveOnDataFile(file);
      const failed = new CliError('cannot write to standard output: ENOSPC', ExitCode.error, { code: 'output_failed' });
      t.stop(failed);
      await expect(done).rejects.toBe(failed);
      expect(t.stderr()).toBe(`facectl serve stopped; state saved to ${file}\n`);
    } finally {
      tmp.cleanup();
    }
  });

  test('without --json: base URL, and per plan its key, credits and compile quota', async () => {
    const t = fakeContext();
    let stop = () => {};
    const onStop = (s: () => void) => {
      stop = s;
      return () => {};
    };
    const done = runServe(t.ctx, { port: '0' }, { onStop });
    await expect.poll(() => t.stdout()).toContain('Ctrl-C');
    const text = t.stdout();
    expect(text).toMatch(/at http:\/\/127\.0\.0\.1:\d+/);
    // Two lines a plan, each within 60 columns; who answers OAuth consent.
    expect(text).toMatch(/\n {2}free {6}fcs_\S{41}\n {12}credits \$1\.00; no compile quota\n/);
    expect(text).toMatch(/\n {2}standard {2}fcs_\S{41}\n {12}credits \$5\.00; 100,000 compile tokens\/month\n/);
    expect(text).toMatch(/\n {2}pro {7}fcs_\S{41}\n {12}credits \$20\.00; 1,000,000 compile tokens\/month\n/);
    expect(text).toMatch(/\n {2}connect {3}fcs_\S{41}\n {12}credits \$5\.00; no compile quota\n/);
    expect(text).toContain('\nOAuth consent: a person, on the consent page\n');
    expect(text.split('\n').filter((line) => line.length > 60)).toEqual([]);
    stop();
    await done;
  });
});

/** Creates a face as the pro user (the third key) of serve's first JSON line, and checks the 201. */
async function createFaceAsPro(info: { base_url: string; users: { key: string }[] }, alias: string, name: string) {
  const created = await call({ baseUrl: info.base_url }, 'createFace', {
    key: info.users[2]?.key as string,
    body: { name, alias },
  });
  expectContract('createFace', created, 201);
}

describe('the built bin', () => {
  const children: ChildProcessWithoutNullStreams[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  function serve(args: string[]) {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--json', ...args], { cwd: ROOT });
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const firstLine = new Promise<{ base_url: string; users: { plan: string; key: string }[] }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c) => {
        out += c;
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)));
      });
      child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    return { child, exit, firstLine, stderr: () => stderr };
  }

  test('SIGTERM while its first count loads the tokenizer: connections waiting to be accepted are answered, not reset', async () => {
    // A breaker's find: 40 documents posted at once as the first counts, SIGTERM 250 ms on (the event loop held by
    // the tokenizer's load): 7 to 25 of them were reset unanswered (ECONNRESET), the listener closed at once.
    const file = join(makeTempDir('facectl-first-'), 'first-count.db');
    const s = serve(['--data', file]);
    const { base_url: base, users } = await s.firstLine;
    const key = users.find((u) => u.plan === 'pro')?.key as string;
    // A connection of its own each (agent: false), not the soak's httpCall over an Agent: through one, the 40 met the
    // stop later, and the test caught the resets 1 run in 7, against 2 in 3 so.
    const post = (path: string, body: object) =>
      new Promise<number | string>((resolve) => {
        const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
        const req = httpRequest(`${base}${path}`, { method: 'POST', agent: false, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode as number));
        });
        req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        req.end(JSON.stringify(body));
      });
    expect(await post('/v1/faces', { name: 'Ada', alias: 'ada-first' })).toBe(201);
    const answers = Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        post('/v1/compile/documents', { alias: 'ada-first', label: `first-${i}`, content: `first count ${i}` }),
      ),
    );
    setTimeout(() => s.child.kill('SIGTERM'), 250);
    const got = await answers;
    expect(await s.exit, s.stderr()).toBe(0);
    // Answered: created, or refused as the service stops (nothing stored then); never a dropped connection.
    expect(got.filter((a) => a !== 201 && a !== 503)).toEqual([]);
    const store = Store.open(file);
    try {
      expect([...store.values('documents')]).toHaveLength(got.filter((a) => a === 201).length);
    } finally {
      store.close();
    }
  });

  test('serve --port 0 --json prints the base URL and four keys first, and exits 0 on SIGTERM after saving', async () => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'state.json');
    const s = serve(['--data', file]);
    const info = await s.firstLine;
    expect(Object.keys(info)).toEqual(['base_url', 'users']);
    expect(info.users.map((u) => u.plan)).toEqual(['free', 'standard', 'pro', 'connect']);
    for (const user of info.users) {
      expect(user.key).toMatch(/^fcs_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}$/);
      expectContract(
        'getCurrentApiKey',
        await call({ baseUrl: info.base_url }, 'getCurrentApiKey', { key: user.key }),
        200,
      );
    }
    await createFaceAsPro(info, 'term-face', 'T');
    s.child.kill('SIGTERM');
    // A clean stop: exit 0; under --json the stop message is a notice line.
    expect(await s.exit).toBe(0);
    expect(JSON.parse(s.stderr())).toEqual({ notice: `facectl serve stopped; state saved to ${file}` });
    expect(readdirSync(tmp.dir)).toEqual(['state.json']);
    expect(storedAliases(file)).toContain('term-face');
    tmp.cleanup();
  });

  test('--json --debug: every stderr line is JSON, the access log `{"debug": …}` lines like any command\'s trace', async () => {
    const s = serve(['--debug']);
    const info = await s.firstLine;
    await createFaceAsPro(info, 'json-log-face', 'J');
    await until(() => s.stderr().includes('/v1/faces '), 'the access log line');
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
    const lines = s.stderr().trimEnd().split('\n');
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed[0]).toEqual({ debug: expect.stringMatching(/^POST \/v1\/faces 201 \d+\.\dms$/) });
    expect(parsed.at(-1)).toEqual({ notice: 'facectl serve stopped' });
    expect(parsed).toHaveLength(2);
  });

  test('--json: a dozen large documents counted at once leave stderr all JSON (no MaxListenersExceededWarning)', async () => {
    // A breaker's find: 12 replace-messages at once printed Node's warning (a listener per count on one signal).
    const s = serve([]);
    const info = await s.firstLine;
    await createFaceAsPro(info, 'many-counts', 'M');
    const key = info.users[2]?.key as string;
    const content = 'word '.repeat(70_000); // over the size counted in a worker
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        fetch(`${info.base_url}/v1/compile/documents`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ alias: 'many-counts', label: `big-${i}`, content }),
        }).then((res) => res.status),
      ),
    );
    expect(answers).toEqual(Array(12).fill(201));
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
    const lines = s.stderr().trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([{ notice: 'facectl serve stopped' }]);
  });

  test('Ctrl-C (SIGINT) without --json: the state is saved, serve says it stopped (no `error:` line), exit 0', async () => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'state.json');
    try {
      const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data', file], { cwd: ROOT });
      children.push(child);
      const watched = watchChild(child);
      await until(() => watched.stdout().includes('Press Ctrl-C to stop.'), 'serve to start');
      const baseUrl = /at (http:\/\/\S+)/.exec(watched.stdout())?.[1] as string;
      const pro = /pro\s+(fcs_\S+)/.exec(watched.stdout())?.[1] as string;
      const created = await call({ baseUrl }, 'createFace', { key: pro, body: { name: 'I', alias: 'int-face' } });
      expectContract('createFace', created, 201);
      child.kill('SIGINT');
      expect(await watched.exit).toEqual({ code: 0, signal: null });
      expect(watched.stderr()).toBe(`facectl serve stopped; state saved to ${file}\n`);
      expect(readdirSync(tmp.dir)).toEqual(['state.json']);
      expect(storedAliases(file)).toContain('int-face');
    } finally {
      tmp.cleanup();
    }
  });

  test('a port already in use is a conflict: exit 5, address_in_use, naming the port and the way out', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const refused = await runCli(['serve', '--port', String(port)]);
      expect(refused.code).toBe(5);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toBe(
        `error: port ${port} on 127.0.0.1 is already in use\npick another with --port, or --port 0 for a free one\n`,
      );
      const json = await runCli(['serve', '--json', '--port', String(port)]);
      expect(json.code).toBe(5);
      expect(JSON.parse(json.stderr).error.code).toBe('address_in_use');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  test('a --data file another program is writing (an sqlite3 shell in a transaction) is refused, data_in_use, and the hint says so', async () => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'state.db');
    try {
      Store.open(file).close();
      const shell = new Database(file);
      shell.exec('BEGIN IMMEDIATE');
      try {
        const refused = await runCli(['serve', '--json', '--port', '0', '--data', file]);
        expect(refused.code).toBe(5);
        const { error } = JSON.parse(refused.stderr) as { error: { code: string; hint: string } };
        expect(error.code).toBe('data_in_use');
        expect(error.hint).toContain(
          'or another program writing to the file, such as an sqlite3 shell in a transaction',
        );
      } finally {
        shell.exec('ROLLBACK');
        shell.close();
      }
    } finally {
      tmp.cleanup();
    }
  });

  test('a second serve given a symbolic link to the file in use is refused (data_in_use, exit 5); the first runs on', async () => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'state.json');
    const alias = join(tmp.dir, 'alias.json');
    try {
      const first = serve(['--data', file]);
      const info = await first.firstLine;
      symlinkSync(file, alias);
      const second = await runCli(['serve', '--port', '0', '--data', alias]);
      expect(second.code).toBe(5);
      expect(second.stdout).toBe('');
      expect(second.stderr).toMatch(
        new RegExp(
          `^error: cannot start the local service: ${file} is in use by another facectl serve \\(given as ${alias}\\)\n`,
        ),
      );
      const json = await runCli(['serve', '--json', '--port', '0', '--data', alias]);
      expect(json.code).toBe(5);
      expect(JSON.parse(json.stderr).error.code).toBe('data_in_use');

      await createFaceAsPro(info, 'kept-face', 'Kept');
      first.child.kill('SIGTERM');
      expect(await first.exit).toBe(0);
      expect(storedAliases(file)).toContain('kept-face');
      expect(lstatSync(alias).isSymbolicLink()).toBe(true);
    } finally {
      tmp.cleanup();
    }
  });

  test('serve on a symbolic link saves into the real file (created when missing); the link stays a link', async () => {
    const tmp = tempDir();
    const realDir = join(tmp.dir, 'real');
    const linkDir = join(tmp.dir, 'links');
    mkdirSync(realDir);
    mkdirSync(linkDir);
    const file = join(realDir, 'state.json');
    const alias = join(linkDir, 'alias.json');
    // A relative link to a file not created yet.
    symlinkSync(join('..', 'real', 'state.json'), alias);
    try {
      const s = serve(['--data', alias]);
      const info = await s.firstLine;
      await createFaceAsPro(info, 'linked-face', 'Linked');
      s.child.kill('SIGTERM');
      expect(await s.exit).toBe(0);
      expect(JSON.parse(s.stderr())).toEqual({
        notice: `facectl serve stopped; state saved to ${file} (given as ${alias})`,
      });
      expect(lstatSync(alias).isSymbolicLink()).toBe(true);
      expect(lstatSync(file).isFile()).toBe(true);
      // The database (and its WAL while serve runs) live beside the real file, none beside the link.
      expect(readdirSync(linkDir)).toEqual(['alias.json']);
      expect(readdirSync(realDir)).toEqual(['state.json']);
      expect(storedAliases(file)).toContain('linked-face');

      // Started again through the link (now to an existing file): the state is there, and saved there.
      const again = serve(['--data', alias]);
      const next = await again.firstLine;
      const faces = await call({ baseUrl: next.base_url }, 'getFace', {
        key: next.users[2]?.key as string,
        params: { face_id: 'linked-face' },
      });
      expectContract('getFace', faces, 200);
      again.child.kill('SIGTERM');
      expect(await again.exit).toBe(0);
      expect(lstatSync(alias).isSymbolicLink()).toBe(true);
      expect(storedAliases(file)).toContain('linked-face');
    } finally {
      tmp.cleanup();
    }
  });

  test('case 41: kill -9 under load, then restart: every request answered 2xx before the kill is there', async () => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'state.json');
    try {
      const s = serve(['--data', file]);
      const info = await s.firstLine;
      const key = info.users[2]?.key as string;
      const svc = { baseUrl: info.base_url };
      expectContract(
        'createFace',
        await call(svc, 'createFace', { key, body: { name: 'Load', alias: 'load-face' } }),
        201,
      );
      // A second service on the same data file is refused while the first runs.
      await expect(startService({ dataFile: file })).rejects.toThrow(/in use/);

      const load = documentLoad(svc, key, 'load-face');
      const { acknowledged } = load;
      await expect.poll(() => acknowledged.length, { timeout: 20_000 }).toBeGreaterThan(300);
      s.child.kill('SIGKILL');
      const stopping = load.stop();
      await s.exit;
      await stopping;

      const again = await startTestService({ dataFile: file });
      try {
        const pro = again.key('pro');
        const stored = new Set(again.store.maps.documents.keys());
        const missing = acknowledged.filter((id) => !stored.has(id));
        expect(missing).toEqual([]);
        const sample = acknowledged.at(-1) as string;
        expectContract(
          'getDocument',
          await call(again, 'getDocument', { key: pro, params: { document_id: sample } }),
          200,
        );
      } finally {
        await again.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
});

describe('--data that serve cannot use: exit 2 naming --data, the path and what is wrong (the built bin)', () => {
  /** The directory's entries, to show that a refused serve created nothing. */
  const entries = (dir: string) => readdirSync(dir).sort();

  test.each([
    [
      'a missing directory',
      (dir: string) => join(dir, 'missing', 'state.json'),
      (dir: string) => `the directory ${join(dir, 'missing')} does not exist (serve does not create it)`,
    ],
    [
      'a directory',
      (dir: string) => dir,
      (dir: string) => `is a directory; give a file path, e.g. ${join(dir, 'state.db')}`,
    ],
    [
      'a path through a file',
      (dir: string) => join(dir, 'plain.txt', 'state.json'),
      (dir: string) => `${join(dir, 'plain.txt')} is not a directory`,
    ],
    [
      // A breaker's: after kill -9, a start under a second name did not see the first name's WAL, and
      // writes it then acknowledged were gone after the next start under the first name.
      'a file with a second name (a hard link)',
      (dir: string) => join(dir, 'linked.txt'),
      () =>
        'has 2 names (hard links); serve needs a file with one name, as its log is found by name: give one ' +
        'of them, or a copy, after removing the other names',
    ],
  ])('%s: exit 2, nothing started, nothing created', async (_what, pathIn, problem) => {
    const dir = makeTempDir('facectl-data-');
    writeFileSync(join(dir, 'plain.txt'), 'not a directory');
    linkSync(join(dir, 'plain.txt'), join(dir, 'linked.txt'));
    const path = pathIn(dir);
    const r = await runCli(['serve', '--port', '0', '--data', path]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: --data: ${path}: ${problem(dir)}\n`);
    expect(entries(dir)).toEqual(['linked.txt', 'plain.txt']);
  });

  test('reported with the other bad flags at once; under --json as one error document', async () => {
    const dir = makeTempDir('facectl-data-');
    const path = join(dir, 'nope', 'state.json');
    const r = await runCli(['serve', '--port', '99999', '--data', path, '--rate-limit', '0']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')).toEqual([
      'error: --port: must be a whole number from 0 to 65535, got "99999"',
      `--data: ${path}: the directory ${join(dir, 'nope')} does not exist (serve does not create it)`,
      '--rate-limit: must be a whole number of requests per second, 1 or more, got "0"',
      '',
    ]);
    const j = await runCli(['serve', '--json', '--port', '0', '--data', dir]);
    expect(j.code).toBe(2);
    expect(j.stdout).toBe('');
    expect(JSON.parse(j.stderr)).toEqual({
      error: {
        code: 'usage',
        message: `--data: ${dir}: is a directory; give a file path, e.g. ${join(dir, 'state.db')}`,
      },
    });
  });

  /**
   * As root every file is writable, so serve is run as nobody there (the temp directory opened to it),
   * from the world-readable copy of the CLI (the clone, and Node 24 in CI, may sit in private 0700
   * directories nobody cannot enter). As another user it runs as that user, from the clone.
   */
  async function serveAsUnprivileged(path: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const root = process.getuid?.() === 0;
    const cli = root ? await worldReadableCli() : { node: process.execPath, bin: BIN, dir: ROOT };
    const child = spawn(cli.node, [cli.bin, 'serve', '--port', '0', '--data', path], {
      cwd: cli.dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), NO_COLOR: '1' },
      ...(root ? { uid: 65534, gid: 65534 } : {}),
    });
    const watched = watchChild(child);
    return watched.exit.then(({ code }) => ({ code, stdout: watched.stdout(), stderr: watched.stderr() }));
  }

  test('a directory serve cannot write in, and a file it cannot write: exit 2, the file as it was', async () => {
    const dir = makeTempDir('facectl-data-');
    chmodSync(dir, 0o755);
    const locked = join(dir, 'locked');
    mkdirSync(locked, { mode: 0o555 });
    chmodSync(locked, 0o555);
    const inLocked = join(locked, 'state.json');
    const r = await serveAsUnprivileged(inLocked);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: --data: ${inLocked}: cannot create files in ${locked} (permission denied)\n`);
    expect(entries(locked)).toEqual([]);

    const open = join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const readOnly = join(open, 'state.json');
    writeFileSync(readOnly, 'kept', { mode: 0o444 });
    chmodSync(readOnly, 0o444);
    const f = await serveAsUnprivileged(readOnly);
    expect(f.code).toBe(2);
    expect(f.stdout).toBe('');
    expect(f.stderr).toBe(`error: --data: ${readOnly}: cannot read and write it (permission denied)\n`);
    expect(readFileSync(readOnly, 'utf8')).toBe('kept');
    expect(entries(open)).toEqual(['state.json']);
  });
});

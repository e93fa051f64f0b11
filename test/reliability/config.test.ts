import { spawn } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentKeyBody, json } from '../helpers/fault-server.js';
import { BIN, makeConfigDir, ROOT, runCli } from '../helpers/run-cli.js';
import { ensureBuilt, type FaultServer, KEY, startFaultServer, tempFile } from './support.js';

// Cases 13-18 of docs/reliability.md: the configuration store (conf, FACECTL_CONFIG_DIR).

let server: FaultServer;
beforeAll(async () => {
  ensureBuilt();
  server = await startFaultServer((req, res) =>
    req.url === '/v1/auth/api-keys/current'
      ? json(res, 200, currentKeyBody())
      : json(res, 404, { detail: 'no', code: 'not_found' }),
  );
});
afterAll(() => server.close());

/** A config dir holding one profile with the given base URL (and key), written by the bin itself. */
async function storedConfig(baseUrl: string, key?: string): Promise<string> {
  const dir = makeConfigDir();
  const set = await runCli(['config', 'set', 'base_url', baseUrl], { env: { FACECTL_CONFIG_DIR: dir } });
  expect(set.code, set.stderr).toBe(0);
  if (key !== undefined) {
    const login = await runCli(['auth', 'login', '--api-key-stdin', '--no-verify'], {
      env: { FACECTL_CONFIG_DIR: dir },
      stdin: `${key}\n`,
    });
    if (login.code !== 0) {
      // No --no-verify: log in against the fault server, which accepts the key.
      const verified = await runCli(['auth', 'login', '--api-key-stdin'], {
        env: { FACECTL_CONFIG_DIR: dir, FACECTL_BASE_URL: server.baseUrl },
        stdin: `${key}\n`,
      });
      expect(verified.code, verified.stderr).toBe(0);
    }
  }
  return dir;
}

describe('configuration', () => {
  it('case 13: no key anywhere -> "not logged in" with the fix, exit 3, nothing sent', async () => {
    const before = server.requests.length;
    const result = await runCli(['faces', 'get', 'face_1'], { env: { FACECTL_BASE_URL: server.baseUrl } });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/not logged in/);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(/facectl auth login/);
    expect(server.requests.length).toBe(before);
  });

  it('case 13, a batch: refused before its file is read or a record made (it failed line by line, hinting --resume)', async () => {
    const dir = makeConfigDir();
    const file = tempFile(
      'batch.ndjson',
      `${['a', 'b', 'c'].map((l) => JSON.stringify({ alias: 'ada', label: l, content: l })).join('\n')}\n`,
    );
    const before = server.requests.length;
    const result = await runCli(['docs', 'submit', '--file', file], {
      env: { FACECTL_BASE_URL: server.baseUrl, FACECTL_CONFIG_DIR: dir },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      'error: not logged in: no API key: not given with --api-key-stdin, FACECTL_API_KEY is not set, and profile "default" has none\n' +
        'run `facectl auth login`, or set FACECTL_API_KEY\n',
    );
    expect(readdirSync(dir)).not.toContain('state');
    expect(server.requests.length).toBe(before);
  });

  it('case 14: corrupt config file -> error naming the file; the file is never cleared or overwritten', async () => {
    const dir = makeConfigDir();
    const path = join(dir, 'config.json');
    writeFileSync(path, '{"profiles": {broken', { mode: 0o600 });
    for (const args of [
      ['config', 'set', 'base_url', 'http://127.0.0.1:5'],
      ['auth', 'status'],
      ['faces', 'get', 'x'],
    ]) {
      const result = await runCli(args, { env: { FACECTL_CONFIG_DIR: dir, FACECTL_API_KEY: KEY } });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`configuration file ${path} is not valid JSON`);
      expect(result.stderr).toMatch(/facectl never clears it/);
      expect(readFileSync(path, 'utf8')).toBe('{"profiles": {broken');
    }
  });

  it('case 14: a syntax error just after a stored key -> the error says where, and shows none of the key', async () => {
    const dir = makeConfigDir();
    const path = join(dir, 'config.json');
    // JSON.parse's own message quotes the text before the error: the key's last characters.
    writeFileSync(path, `{"profiles":{"default":{"api_key":"${KEY}","x":y}}}`, { mode: 0o600 });
    for (const extra of [[], ['--debug'], ['--json']]) {
      const result = await runCli(['auth', 'status', ...extra], { env: { FACECTL_CONFIG_DIR: dir } });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`configuration file ${path} is not valid JSON (line 1, column `);
      expect(result.stderr).not.toContain(KEY.slice(-4));
      // doctor reads the file through the same check (it quoted JSON.parse's message).
      const doctor = await runCli(['doctor', ...extra], { env: { FACECTL_CONFIG_DIR: dir } });
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toContain(`configuration file ${path} is not valid JSON (line 1, column `);
      expect(`${doctor.stdout}${doctor.stderr}`).not.toContain(KEY.slice(-4));
    }
  });

  it('a key pasted where a URL or a profile name belongs: every message shows its prefix only', async () => {
    const secret = KEY.slice(13);
    for (const [args, env] of [
      [['--base-url', KEY, 'auth', 'status'], {}],
      [['auth', 'status', '--json'], { FACECTL_BASE_URL: KEY }],
      [['--profile', KEY, 'auth', 'status'], {}],
      [['--base-url', KEY, 'doctor'], {}],
      [['--base-url', KEY, 'doctor', '--json'], {}],
    ] as const) {
      const result = await runCli([...args], { env: { FACECTL_CONFIG_DIR: makeConfigDir(), ...env } });
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(`${result.stdout}${result.stderr}`, args.join(' ')).toContain(KEY.slice(0, 12));
      expect(`${result.stdout}${result.stderr}`, args.join(' ')).not.toContain(secret);
    }
  });

  it('a config or state directory whose parent cannot be made (/proc/self/...): an error, not an endless loop', async () => {
    // Node's recursive mkdir retries such a path forever at full CPU, deaf to SIGTERM (a breaker's find).
    const config = await runCli(['config', 'set', 'base_url', 'http://127.0.0.1:5'], {
      env: { FACECTL_CONFIG_DIR: '/proc/self/nope/facectl' },
      timeoutMs: 20_000,
    });
    expect(config.code).toBe(1);
    expect(config.stderr).toContain('cannot write configuration file /proc/self/nope/facectl/config.json (ENOENT)');
    const batch = await runCli(['docs', 'submit', '-', '--format', 'ndjson'], {
      env: { FACECTL_STATE_DIR: '/proc/self/nope/state', FACECTL_API_KEY: KEY, FACECTL_BASE_URL: server.baseUrl },
      stdin: '{"alias":"a","label":"l","content":"c"}\n',
      timeoutMs: 20_000,
    });
    expect(batch.code).toBe(1);
    // Checked before any mkdir: the directory there is that denies it, not the record directory it would make.
    expect(batch.stderr).toMatch(
      /cannot write batch records in \/proc\/self: [a-z ]+, E(PERM|ACCES); nothing was sent/,
    );
  }, 60_000);

  it('case 15: config written with mode 0644 by another tool -> warning, and rewritten 0600', async () => {
    const dir = await storedConfig('http://127.0.0.1:5');
    const path = join(dir, 'config.json');
    chmodSync(path, 0o644);
    const result = await runCli(['config', 'get', 'base_url'], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('http://127.0.0.1:5');
    expect(result.stderr).toMatch(/had mode 0644; changed it to 0600/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it.each([
    ['of 0 bytes (the first write fails)', 0],
    ['of 1 KiB (a write is cut part way, with no error)', 1],
  ])(
    'case 16: unwritable config (a file-size limit %s via ulimit -f, since root ignores read-only modes) -> clear error, the old file intact',
    async (_, kib) => {
      const dir = await storedConfig('http://127.0.0.1:5');
      const path = join(dir, 'config.json');
      // Profiles enough that the file is more than a few KiB: a cut write would leave a torn file.
      const profiles = Object.fromEntries(
        Array.from({ length: 60 }, (_, i) => [`p${i}`, { base_url: `http://127.0.0.1:${5000 + i}` }]),
      );
      writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), profiles }, null, 2), {
        mode: 0o600,
      });
      const old = readFileSync(path, 'utf8');
      expect(old.length).toBeGreaterThan(3 * 1024);
      // Node resets SIGXFSZ to its default (kill) at start; the preload ignores it so the write fails with EFBIG.
      const preload = tempFile('ignore-xfsz.cjs', "process.on('SIGXFSZ', () => {});\n");
      const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(
          'bash',
          [
            '-c',
            `ulimit -f ${kib}; exec "$0" -r "$1" "$2" config set base_url http://127.0.0.1:6`,
            process.execPath,
            preload,
            BIN,
          ],
          {
            cwd: ROOT,
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin', FACECTL_CONFIG_DIR: dir, NO_COLOR: '1' },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString('utf8');
        });
        child.on('close', (code) => resolve({ code, stderr }));
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `cannot write configuration file ${path} (a file size limit was reached, EFBIG); it was left unchanged`,
      );
      expect(result.stderr).toContain('raise the limit (ulimit -f)');
      expect(result.stderr).not.toContain('permissions');
      expect(readFileSync(path, 'utf8')).toBe(old);
      expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    },
  );

  // A full disk or a read-only file system, injected by a preload where the store meets it (the temp
  // file's write, its creation): the message says what happened; the permissions only for EACCES/EPERM.
  it.each([
    ['ENOSPC', 'write', 'no space left on the device, ENOSPC', 'make room on the disk of'],
    ['EDQUOT', 'write', 'disk quota exceeded, EDQUOT', 'make room in your quota on the disk of'],
    ['EROFS', 'open', 'read-only file system, EROFS', 'is on a read-only file system: set FACECTL_CONFIG_DIR'],
    ['EACCES', 'open', 'permission denied, EACCES', 'check the permissions of the configuration directory'],
  ])(
    'case 16: a config write failing with %s (at %s) says so, with its own fix; the old file intact',
    async (code, at, what, fix) => {
      const dir = await storedConfig('http://127.0.0.1:5');
      const path = join(dir, 'config.json');
      const old = readFileSync(path, 'utf8');
      const preload = tempFile(
        'inject.cjs',
        `const fs = require('node:fs');
const fail = () => Object.assign(new Error('${code}: injected'), { code: '${code}', syscall: '${at}' });
const { openSync, writeFileSync } = fs;
fs.openSync = function (file, ...rest) {
  if ('${at}' === 'open' && String(file).endsWith('.tmp')) throw fail();
  return openSync.call(this, file, ...rest);
};
fs.writeFileSync = function (file, ...rest) {
  if ('${at}' === 'write' && typeof file === 'number') throw fail();
  return writeFileSync.call(this, file, ...rest);
};
`,
      );
      const result = await runCli(['config', 'set', 'base_url', 'http://127.0.0.1:6'], {
        env: { FACECTL_CONFIG_DIR: dir, NODE_OPTIONS: `--require ${preload}` },
      });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(`cannot write configuration file ${path} (${what}); it was left unchanged`);
      expect(result.stderr).toContain(fix);
      if (code !== 'EACCES') expect(result.stderr).not.toContain('permissions');
      expect(readFileSync(path, 'utf8')).toBe(old);
      expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    },
  );

  it('case 17: kill -9 during config writes (20 SIGKILLs of the bin mid-`config set`) -> config.json always parses, old or new', async () => {
    const dir = makeConfigDir();
    // A large file (many profiles) makes each write long enough for some kills to land inside it.
    const profiles: Record<string, { base_url: string }> = {};
    for (let i = 0; i < 20_000; i++) profiles[`p${i}`] = { base_url: `http://127.0.0.1:${1000 + (i % 5000)}` };
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles }), { mode: 0o600 });
    const written = new Set(['http://127.0.0.1:1000']);
    for (let i = 0; i < 20; i++) {
      const value = `http://127.0.0.1:${2000 + i}`;
      written.add(value);
      const child = spawn(process.execPath, [BIN, 'config', 'set', 'base_url', value, '--profile', 'p0'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', FACECTL_CONFIG_DIR: dir },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.on('close', resolve));
      await new Promise((resolve) => setTimeout(resolve, 100 + ((i * 37) % 250)));
      child.kill('SIGKILL');
      await exited;
      const data = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      expect(Object.keys(data.profiles)).toHaveLength(20_000);
      expect(written.has(data.profiles.p0.base_url)).toBe(true);
    }
    // The next write clears what killed writers left (temp files may hold a key; the lock is taken over).
    const after = await runCli(['config', 'set', 'base_url', 'http://127.0.0.1:3000', '--profile', 'p0'], {
      env: { FACECTL_CONFIG_DIR: dir },
    });
    expect(after.code, after.stderr).toBe(0);
    // What may stay beside config.json: only the takeover guard of the lock (an empty directory), left when
    // a kill lands inside a takeover's few lines; it holds nothing, and the next takeover clears it by age.
    // Temp files (which may hold a key) and the lock itself must be gone.
    const left = readdirSync(dir).filter((name) => name !== 'state' && name !== 'config.json');
    for (const name of left) {
      expect(name).toBe('config.json.lock.takeover');
      expect(readdirSync(join(dir, name))).toEqual([]);
    }
    expect(readdirSync(dir)).toContain('config.json');
  });

  it('case 18: key from the environment overriding a stored one -> `auth status` says which source is used', async () => {
    const dir = await storedConfig(server.baseUrl, 'fcs_storedk1_0123456789abcdefABCDEFGHIJ0123');
    const stored = await runCli(['auth', 'status'], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(stored.code, stored.stderr).toBe(0);
    expect(stored.stdout).toMatch(/fcs_storedk1.*from (the )?profile/);
    const before = server.requests.length;
    const fromEnv = await runCli(['auth', 'status'], { env: { FACECTL_CONFIG_DIR: dir, FACECTL_API_KEY: KEY } });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.stdout).toMatch(/fcs_abcdefgh.*from FACECTL_API_KEY/);
    expect(fromEnv.stdout).not.toContain('fcs_storedk1');
    const sent = server.requests.slice(before).at(-1);
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});

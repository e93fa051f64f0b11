import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/main.js';
import { currentKeyBody, json } from '../helpers/fault-server.js';
import { makeConfigDir, runCli } from '../helpers/run-cli.js';
import { createTestContext } from '../helpers/test-context.js';
import { ensureBuilt, type FaultServer, KEY, startFaultServer } from './support.js';

// Case 47 of docs/reliability.md and issue 16 (keys bound to their host): a key is stored with the base
// URL it was checked against or created at, and is never sent to another one. Two servers: `home`, where
// keys are saved, and `capture`, which records every request and must never see a stored key.

const STORED = 'fcs_storedk1_0123456789abcdefABCDEFGHIJ0123';
const OTHER = 'fcs_otherkey_0123456789abcdefABCDEFGHIJ0123';

let home: FaultServer;
let capture: FaultServer;
const answer: Parameters<typeof startFaultServer>[0] = (req, res) => {
  if (req.method === 'POST' && req.url === '/v1/auth/api-keys') {
    json(res, 201, { ...currentKeyBody(), key: STORED, key_prefix: 'fcs_storedk1' });
  } else if (req.url === '/v1/auth/api-keys/current') json(res, 200, currentKeyBody());
  else json(res, 404, { detail: 'no such face', code: 'not_found' });
};
beforeAll(async () => {
  ensureBuilt();
  home = await startFaultServer(answer);
  capture = await startFaultServer(answer);
});
afterAll(async () => {
  await home.close();
  await capture.close();
});

/** Every Authorization header the capture server has seen since `from`. */
const seenAt = (server: FaultServer, from: number) =>
  server.requests.slice(from).map((r) => r.headers.authorization ?? '(none)');

/** A config dir whose default profile holds STORED, logged in at `home` by the bin itself. */
async function loggedInAtHome(extra: Record<string, string> = {}): Promise<string> {
  const dir = makeConfigDir();
  const login = await runCli(['auth', 'login', '--api-key-stdin'], {
    env: { FACECTL_CONFIG_DIR: dir, FACECTL_BASE_URL: home.baseUrl, ...extra },
    stdin: `${STORED}\n`,
  });
  expect(login.code, login.stderr).toBe(0);
  return dir;
}

describe('case 47: a stored key goes only to the base URL it was saved for', () => {
  it('--base-url or FACECTL_BASE_URL elsewhere, without a key of its own -> exit 3 naming both; the capture server sees nothing', async () => {
    const dir = await loggedInAtHome();
    const from = capture.requests.length;
    for (const env of [{}, { FACECTL_BASE_URL: capture.baseUrl }]) {
      const args = ['faces', 'get', 'face_1', ...('FACECTL_BASE_URL' in env ? [] : ['--base-url', capture.baseUrl])];
      const result = await runCli(args, { env: { FACECTL_CONFIG_DIR: dir, ...env } });
      expect(result.code, result.stderr).toBe(3);
      expect(result.stderr).toContain(
        `the key stored in profile "default" was saved for ${home.baseUrl}; it is not sent to ${capture.baseUrl}`,
      );
      expect(result.stderr).toMatch(/FACECTL_API_KEY or --api-key-stdin/);
    }
    expect(seenAt(capture, from)).toEqual([]);
    // At home the stored key still works.
    const atHome = home.requests.length;
    const ok = await runCli(['faces', 'get', 'face_1'], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(ok.code).toBe(4); // the home server's 404
    expect(seenAt(home, atHome)).toEqual([`Bearer ${STORED}`]);
  });

  it('a key of its own (FACECTL_API_KEY or --api-key-stdin) is sent to the other base URL, never the stored one', async () => {
    const dir = await loggedInAtHome();
    const from = capture.requests.length;
    const viaEnv = await runCli(['faces', 'get', 'face_1', '--base-url', capture.baseUrl], {
      env: { FACECTL_CONFIG_DIR: dir, FACECTL_API_KEY: OTHER },
    });
    expect(viaEnv.code, viaEnv.stderr).toBe(4);
    const viaStdin = await runCli(['faces', 'get', 'face_1', '--base-url', capture.baseUrl, '--api-key-stdin'], {
      env: { FACECTL_CONFIG_DIR: dir },
      stdin: `${OTHER}\n`,
    });
    expect(viaStdin.code, viaStdin.stderr).toBe(4);
    expect(seenAt(capture, from)).toEqual([`Bearer ${OTHER}`, `Bearer ${OTHER}`]);
  });

  it('`auth login` with FACECTL_BASE_URL stores the key with that URL, even when the profile pointed elsewhere', async () => {
    const dir = makeConfigDir();
    const set = await runCli(['config', 'set', 'base_url', capture.baseUrl], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(set.code, set.stderr).toBe(0);
    const from = capture.requests.length;
    const login = await runCli(['auth', 'login', '--api-key-stdin'], {
      env: { FACECTL_CONFIG_DIR: dir, FACECTL_BASE_URL: home.baseUrl },
      stdin: `${STORED}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain(`profile default now uses ${home.baseUrl} (its base_url was ${capture.baseUrl})`);
    const profile = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).profiles.default;
    expect(profile).toEqual({ base_url: home.baseUrl, api_key: STORED, api_key_base_url: home.baseUrl });
    const atHome = home.requests.length;
    const next = await runCli(['faces', 'get', 'face_1'], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(next.code).toBe(4);
    expect(seenAt(home, atHome)).toEqual([`Bearer ${STORED}`]);
    expect(seenAt(capture, from)).toEqual([]);
  });

  it('`keys create --save` binds the new key to the base URL that made it', async () => {
    const dir = makeConfigDir();
    const created = await runCli(['keys', 'create', '--save', '--json', '--profile', 'made'], {
      env: { FACECTL_CONFIG_DIR: dir, FACECTL_BASE_URL: home.baseUrl, FACECTL_API_KEY: KEY },
    });
    expect(created.code, created.stderr).toBe(0);
    const from = capture.requests.length;
    const elsewhere = await runCli(['faces', 'get', 'face_1', '--profile', 'made', '--base-url', capture.baseUrl], {
      env: { FACECTL_CONFIG_DIR: dir },
    });
    expect(elsewhere.code).toBe(3);
    expect(elsewhere.stderr).toContain(`profile "made" was saved for ${home.baseUrl}`);
    expect(seenAt(capture, from)).toEqual([]);
  });

  it('`config set base_url` elsewhere warns; the key stays with its URL (also a key stored before binding existed)', async () => {
    const bound = await loggedInAtHome();
    const legacy = makeConfigDir();
    writeFileSync(
      join(legacy, 'config.json'),
      JSON.stringify({ profiles: { default: { base_url: home.baseUrl, api_key: STORED } } }),
      { mode: 0o600 },
    );
    const from = capture.requests.length;
    for (const dir of [bound, legacy]) {
      const set = await runCli(['config', 'set', 'base_url', capture.baseUrl], { env: { FACECTL_CONFIG_DIR: dir } });
      expect(set.code, set.stderr).toBe(0);
      expect(set.stderr).toContain(`was saved for ${home.baseUrl} and is not sent to ${capture.baseUrl}`);
      const next = await runCli(['faces', 'get', 'face_1'], { env: { FACECTL_CONFIG_DIR: dir } });
      expect(next.code, next.stderr).toBe(3);
    }
    expect(seenAt(capture, from)).toEqual([]);
  });

  it('`auth status` shows the binding; for another base URL it shows where the key belongs and the error once', async () => {
    const dir = await loggedInAtHome();
    const here = await runCli(['auth', 'status'], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(here.code, here.stderr).toBe(0);
    expect(here.stdout).toMatch(new RegExp(`stored key for\\s+${home.baseUrl}`));
    const json = await runCli(['auth', 'status', '--json'], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(JSON.parse(json.stdout).key_base_url).toBe(home.baseUrl);
    const get = await runCli(['config', 'get', 'api_key_base_url'], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(get.stdout).toBe(`${home.baseUrl}\n`);
    // It moves only with the key: `config set` cannot point a stored key at another service.
    const moved = await runCli(['config', 'set', 'api_key_base_url', capture.baseUrl], {
      env: { FACECTL_CONFIG_DIR: dir },
    });
    expect(moved.code).toBe(2);
    expect(moved.stderr).toMatch(/api_key_base_url is stored with the key/);

    const from = capture.requests.length;
    const there = await runCli(['auth', 'status', '--base-url', capture.baseUrl], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(there.code).toBe(3);
    expect(there.stdout).toMatch(new RegExp(`stored key for\\s+${home.baseUrl}`));
    expect(there.stdout).toMatch(/key\s+none/);
    const both = there.stdout + there.stderr;
    expect(both.split('was saved for').length - 1).toBe(1);
    expect(seenAt(capture, from)).toEqual([]);
  });
});

describe('auth token, auth switch, default_profile (issue 16, item 2)', () => {
  it('`auth token` prints the key for its own base URL only, with no warning when piped', async () => {
    const dir = await loggedInAtHome();
    const token = await runCli(['auth', 'token'], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout).toBe(`${STORED}\n`);
    expect(token.stderr).toBe('');
    const elsewhere = await runCli(['auth', 'token', '--base-url', capture.baseUrl], {
      env: { FACECTL_CONFIG_DIR: dir },
    });
    expect(elsewhere.code).toBe(3);
    expect(elsewhere.stdout).toBe('');
    const none = await runCli(['auth', 'token'], { env: { FACECTL_CONFIG_DIR: makeConfigDir() } });
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/not logged in/);
  });

  it('`auth switch` and `config set default_profile` refuse a profile that does not exist (exit 2), file unchanged', async () => {
    const dir = await loggedInAtHome();
    const before = readFileSync(join(dir, 'config.json'), 'utf8');
    for (const args of [
      ['auth', 'switch', 'ghost'],
      ['config', 'set', 'default_profile', 'ghost'],
    ]) {
      const result = await runCli(args, { env: { FACECTL_CONFIG_DIR: dir } });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(`no profile named "ghost" in ${join(dir, 'config.json')}`);
      expect(result.stderr).toContain('known profiles: default');
      expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe(before);
    }
    const made = await runCli(['config', 'set', 'base_url', home.baseUrl, '--profile', 'work'], {
      env: { FACECTL_CONFIG_DIR: dir },
    });
    expect(made.code).toBe(0);
    const switched = await runCli(['auth', 'switch', 'work'], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(switched.code, switched.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).default_profile).toBe('work');
    const set = await runCli(['config', 'set', 'default_profile', 'default'], { env: { FACECTL_CONFIG_DIR: dir } });
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).default_profile).toBe('default');
  });
});

describe('auth token on a terminal, auth status with a refused key', () => {
  it('`auth token` on a terminal warns on stderr before printing the key', async () => {
    const tc = createTestContext({ baseUrl: home.baseUrl, apiKey: STORED, stdoutIsTTY: true });
    try {
      const code = await run(['auth', 'token'], tc.ctx);
      expect(code).toBe(0);
      expect(tc.stdout()).toContain(STORED);
      expect(tc.stderr().replace(/\s+/g, ' ')).toMatch(/prints the full API key for .*anyone who sees it can use it/);
      expect(tc.stderr()).not.toContain(STORED);
    } finally {
      await tc.close();
    }
  });

  it('`auth status` with a key the service refuses prints the refusal once (issue 12, item 13)', async () => {
    const refusing = await startFaultServer((_req, res) =>
      json(res, 401, { detail: 'invalid API key', code: 'invalid_api_key' }),
    );
    try {
      const result = await runCli(['auth', 'status'], {
        env: { FACECTL_BASE_URL: refusing.baseUrl, FACECTL_API_KEY: OTHER },
      });
      expect(result.code).toBe(3);
      expect(result.stdout).toMatch(/key\s+fcs_otherkey… \(from FACECTL_API_KEY\)/);
      const both = `${result.stdout}\n${result.stderr}`;
      expect(both.split('invalid API key').length - 1, both).toBe(1);
    } finally {
      await refusing.close();
    }
  });
});

import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BASE_URL } from '../../src/api/types.js';
import { checkProxy } from '../../src/commands/doctor/doctor.js';
import type { Check } from '../../src/commands/doctor/checks.js';
import { run } from '../../src/main.js';
import { currentKeyBody, json, startFaultServer } from '../helpers/fault-server.js';
import { call, expectContract, manualClock, startTestService, type TestService } from '../helpers/service.js';
import { createTestContext, type TestContextOptions } from '../helpers/test-context.js';

const clock = manualClock(new Date().toISOString());
let service: TestService;
const dirs: string[] = [];
beforeAll(async () => {
  service = await startTestService({ clock });
});
afterAll(async () => {
  await service.close();
});
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A FACECTL_CONFIG_DIR holding a config.json with the given text and modes. */
function configDir(text: string | undefined, fileMode = 0o600, dirMode = 0o700): string {
  const dir = mkdtempSync(join(tmpdir(), 'facectl-doctor-'));
  dirs.push(dir);
  if (text !== undefined) {
    writeFileSync(join(dir, 'config.json'), text);
    chmodSync(join(dir, 'config.json'), fileMode);
  }
  chmodSync(dir, dirMode);
  return dir;
}

async function doctor(options: TestContextOptions, argv: string[] = ['doctor', '--json']) {
  const tc = createTestContext({ env: { FACECTL_CONFIG_DIR: configDir('{}') }, ...options });
  try {
    const code = await run(argv, tc.ctx);
    const stdout = tc.stdout();
    const checks: Check[] = argv.includes('--json') ? JSON.parse(stdout).checks : [];
    const byName = (name: string) => {
      const check = checks.find((c) => c.name === name);
      if (!check) throw new Error(`no check named ${name} in ${stdout}`);
      return check;
    };
    return { code, stdout, stderr: tc.stderr(), checks, byName };
  } finally {
    await tc.close();
  }
}

describe('facectl doctor', () => {
  it('passes every check against the local service with a working key', async () => {
    const r = await doctor({ baseUrl: service.baseUrl, apiKey: service.key('pro') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.checks.map((c) => c.name)).toEqual([
      'config file',
      'config file mode',
      'config directory mode',
      'state directory',
      'key source',
      'base url',
      'proxy',
      'tls',
      'reachable',
      'key works',
      'clock skew',
    ]);
    for (const check of r.checks) expect(check, JSON.stringify(check)).toMatchObject({ status: 'ok', fix: null });
    expect(r.byName('config file mode').detail).toBe('0600 (only you can read it)');
    expect(r.byName('key works').detail).toMatch(/plan pro, scopes v1:\*, budget unlimited, never expires/);
    expect(r.byName('key source').detail).toContain(
      `from the stored profile (profile default, saved for ${service.baseUrl})`,
    );
    expect(r.stdout + r.stderr).not.toContain(service.key('pro'));
  });

  it('on a colour terminal: statuses coloured (ok green, fail red); a FIX column only when a check has a fix', async () => {
    const passing = await doctor({ baseUrl: service.baseUrl, apiKey: service.key('pro'), stdoutIsTTY: true }, [
      'doctor',
    ]);
    expect(passing.code, passing.stderr).toBe(0);
    expect(passing.stdout).toContain('\x1b[32mok\x1b[39m');
    expect(passing.stdout).toContain('DETAIL');
    expect(passing.stdout).not.toContain('FIX');
    const failing = await doctor({ baseUrl: service.baseUrl, apiKey: 'fcs_nokey_0123456789', stdoutIsTTY: true }, [
      'doctor',
    ]);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain('\x1b[31mfail\x1b[39m');
    expect(failing.stdout).toContain('FIX');
    // Piped: no colour, and the same four columns whatever passed (scripts split them).
    const piped = await doctor({ baseUrl: service.baseUrl, apiKey: service.key('pro') }, ['doctor']);
    expect(piped.stdout).not.toContain('\x1b');
    for (const line of piped.stdout.replace(/\n$/, '').split('\n')) expect(line.split('\t')).toHaveLength(4);
  });

  it('says a state directory not made yet is fine, and makes nothing; one there is named as it is', async () => {
    const state = join(configDir(undefined), 'state');
    const env = { FACECTL_CONFIG_DIR: configDir('{}'), FACECTL_STATE_DIR: state };
    const r = await doctor({ baseUrl: service.baseUrl, apiKey: service.key('pro'), env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.byName('state directory')).toEqual({
      name: 'state directory',
      status: 'ok',
      detail: `${state} does not exist yet (no batch recorded; \`docs submit\` of a batch creates it)`,
      fix: null,
    });
    expect(existsSync(state)).toBe(false);
    mkdirSync(state, { mode: 0o700 });
    const made = await doctor({ baseUrl: service.baseUrl, apiKey: service.key('pro'), env });
    expect(made.byName('state directory')).toMatchObject({ status: 'ok', detail: state });
    expect(readdirSync(state)).toEqual([]);
  });

  it('prints one line per check with its status when not --json', async () => {
    const r = await doctor({ baseUrl: service.baseUrl, apiKey: service.key('free') }, ['doctor']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(11);
    expect(lines.every((line) => line.startsWith('ok\t'))).toBe(true);
    expect(r.stdout).toContain('plan free');
  });

  it('fails without a key, naming `facectl auth login`, and exits 1', async () => {
    const r = await doctor({ baseUrl: service.baseUrl });
    expect(r.code).toBe(1);
    expect(r.byName('key source')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('facectl auth login'),
    });
    expect(r.byName('key works')).toMatchObject({
      status: 'warn',
      detail: 'not checked: no API key for this base URL',
      fix: 'see "key source"',
    });
    expect(r.byName('reachable').status).toBe('ok');
    expect(r.stderr).toContain('checks failed: key source');
  });

  it('a key stored for another base URL: key works points at key source, which says why (a newcomer read "no API key")', async () => {
    const profile = { api_key: service.key('pro'), api_key_base_url: 'http://127.0.0.1:9', base_url: service.baseUrl };
    const r = await doctor({ config: { profiles: { default: profile } } });
    expect(r.code).toBe(1);
    expect(r.byName('key source').detail).toContain('was saved for http://127.0.0.1:9');
    expect(r.byName('key works')).toMatchObject({
      detail: 'not checked: no API key for this base URL',
      fix: 'see "key source"',
    });
  });

  it('says which variable supplied the key', async () => {
    const r = await doctor({
      baseUrl: service.baseUrl,
      env: { FACECTL_API_KEY: service.key('standard'), FACECTL_CONFIG_DIR: configDir(undefined) },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.byName('key source').detail).toContain('FACECTL_API_KEY');
    expect(r.byName('config file').detail).toContain('does not exist yet');
  });

  it("shows a key as every command does: a service key's prefix, of another key at most a quarter (a breaker saw 12 characters)", async () => {
    for (const [key, shown] of [
      [service.key('standard'), `${service.key('standard').slice(0, 12)}… from FACECTL_API_KEY`],
      ['ghp_MySecretTok', 'ghp… from FACECTL_API_KEY'],
      ['fcs_SECRE_T', 'fc… from FACECTL_API_KEY'],
    ] as const) {
      const r = await doctor({
        baseUrl: service.baseUrl,
        env: { FACECTL_API_KEY: key, FACECTL_CONFIG_DIR: configDir(undefined) },
      });
      // No "(profile default)": the variable's key is no profile's (a ring's find, the file's default another).
      expect(r.byName('key source').detail).toBe(shown);
      expect(r.stdout + r.stderr).not.toContain(key.slice(0, Math.max(5, key.length / 2 + 1)));
    }
  });

  it('fails on a key the service refuses because it expired', async () => {
    const created = expectContract(
      'createApiKey',
      await call(service, 'createApiKey', { key: service.key('pro'), body: { name: 'short', expires_in_days: 1 } }),
      201,
    );
    clock.advance(2 * 86_400_000);
    try {
      const r = await doctor({ baseUrl: service.baseUrl, apiKey: created.key });
      expect(r.code).toBe(1);
      expect(r.byName('key works')).toMatchObject({ status: 'fail', detail: expect.stringContaining('401') });
      expect(r.byName('key works').fix).toContain('facectl auth login');
      expect(r.stdout + r.stderr).not.toContain(created.key);
      // The same key stored in profile exp: each command the fixes print names it (pasted, it logs into exp).
      const config = { profiles: { exp: { api_key: created.key, base_url: service.baseUrl } } };
      const named = await doctor({ config }, ['--profile', 'exp', 'doctor', '--json']);
      expect(named.code).toBe(1);
      expect(named.byName('key works').fix).toContain('`facectl auth login --profile exp`');
      const human = await doctor({ config }, ['doctor', '--profile', 'exp']);
      expect(human.stdout).toMatch(/^fail\tkey works\t.*`facectl auth login --profile exp`/m);
      expect(human.stdout).not.toMatch(/`facectl auth login`/);
      // The key came from the profile, not FACECTL_API_KEY: the fix says where the new key goes, nothing else.
      expect(named.byName('key works').fix).toBe('run `facectl auth login --profile exp` with a new key');
      const fromEnv = await doctor({
        baseUrl: service.baseUrl,
        env: { FACECTL_API_KEY: created.key, FACECTL_CONFIG_DIR: configDir('{}') },
      });
      expect(fromEnv.byName('key works').fix).toBe('set FACECTL_API_KEY to a new key');
    } finally {
      clock.advance(-2 * 86_400_000);
    }
  });

  it('warns about a key expiring soon, a spent budget and a skewed clock (fault server)', async () => {
    const soon = new Date(Date.parse('2026-03-15T12:00:00Z') + 3 * 86_400_000).toISOString();
    const fault = await startFaultServer((_req, res) =>
      json(res, 200, currentKeyBody({ expires_at: soon, budget_usd: 1, spent_usd: 1 }), {
        date: 'Sun, 15 Mar 2026 11:50:00 GMT',
      }),
    );
    try {
      const r = await doctor({
        baseUrl: fault.baseUrl,
        apiKey: 'fcs_abcdefgh_0123456789',
        now: '2026-03-15T12:00:00Z',
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.byName('key works')).toMatchObject({
        status: 'warn',
        detail: expect.stringMatching(/^expires in 3 days/),
      });
      expect(r.byName('key works').detail).toContain('budget left $0.00 of $1.00');
      // Not `keys create --save` with this key: the new key would expire with it (the service refuses a later one).
      const made = ', made with a longer-lived key than this one (a key expires no later than the key that makes it)';
      expect(r.byName('key works').fix).toBe(`run \`facectl auth login\` with a new key${made}`);
      expect(r.byName('key works').fix).not.toContain('--save');
      const lim = await doctor(
        {
          config: { profiles: { lim: { api_key: 'fcs_abcdefgh_0123456789', base_url: fault.baseUrl } } },
          now: '2026-03-15T12:00:00Z',
        },
        ['doctor', '--profile', 'lim', '--json'],
      );
      expect(lim.byName('key works').fix).toBe(`run \`facectl auth login --profile lim\` with a new key${made}`);
      const env = await doctor({
        baseUrl: fault.baseUrl,
        env: { FACECTL_API_KEY: 'fcs_abcdefgh_0123456789', FACECTL_CONFIG_DIR: configDir('{}') },
        now: '2026-03-15T12:00:00Z',
      });
      expect(env.byName('key works').fix).toBe(`set FACECTL_API_KEY to a new key${made}`);
      expect(r.byName('clock skew')).toMatchObject({
        status: 'warn',
        detail: 'this machine is 600 s ahead of the service',
      });
      expect(fault.requests[0]?.headers.authorization).toBe('Bearer fcs_abcdefgh_0123456789');
    } finally {
      await fault.close();
    }
  });

  it("a clock within the second a Date header shows agrees with the service's: no skew of 1 s from the cut", async () => {
    const fault = await startFaultServer((_req, res) =>
      json(res, 200, currentKeyBody(), { date: 'Sun, 15 Mar 2026 12:00:00 GMT' }),
    );
    try {
      for (const [now, detail] of [
        [
          '2026-03-15T12:00:00.900Z',
          "this machine's clock agrees with the service's (to the second its Date header shows)",
        ],
        ['2026-03-15T12:00:02.600Z', 'this machine is 2 s ahead of the service'],
        ['2026-03-15T11:59:58.000Z', 'this machine is 2 s behind the service'],
      ]) {
        const r = await doctor({ baseUrl: fault.baseUrl, apiKey: 'fcs_abcdefgh_0123456789', now });
        expect(r.byName('clock skew'), now).toMatchObject({ status: 'ok', detail });
      }
    } finally {
      await fault.close();
    }
  });

  it('fails when the service answers 401 (fault server) and when it cannot be reached', async () => {
    const fault = await startFaultServer((_req, res) => json(res, 401, { detail: 'key expired', code: 'key_expired' }));
    const r = await doctor({ baseUrl: fault.baseUrl, apiKey: 'fcs_abcdefgh_0123456789' });
    await fault.close();
    expect(r.code).toBe(1);
    expect(r.byName('key works')).toMatchObject({ status: 'fail', detail: expect.stringContaining('key expired') });

    const down = await doctor({ baseUrl: fault.baseUrl, apiKey: 'fcs_abcdefgh_0123456789' });
    expect(down.code).toBe(1);
    expect(down.byName('reachable')).toMatchObject({ status: 'fail', detail: expect.stringContaining('refused') });
    expect(down.byName('clock skew').status).toBe('warn');
  });

  it('FACECTL_HTTP_TIMEOUT, which its fix offers, sets how long the probe waits (a ring: it waited 10 s regardless)', async () => {
    const silent = await startFaultServer(() => undefined);
    try {
      const env = { FACECTL_CONFIG_DIR: configDir('{}'), FACECTL_HTTP_TIMEOUT: '0.3' };
      const r = await doctor({ baseUrl: silent.baseUrl, apiKey: 'fcs_abcdefgh_0123456789', env });
      expect(r.code).toBe(1);
      expect(r.byName('reachable')).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('no response within 0.3 s'),
      });
    } finally {
      await silent.close();
    }
  });

  it('--debug shows the probe of the service, the key redacted', async () => {
    const key = service.key('pro');
    const r = await doctor({ baseUrl: service.baseUrl, apiKey: key }, ['doctor', '--debug']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`debug: > GET ${service.baseUrl}/v1/auth/api-keys/current`);
    expect(r.stderr).toContain('debug: > authorization: Bearer [redacted]');
    expect(r.stderr).toMatch(/debug: < 200 \(\d+ ms\)/);
    expect(r.stdout + r.stderr).not.toContain(key);
  });

  it('fails "reachable" for a web server that is not the service (an HTML 404), with or without a key', async () => {
    const page = await startFaultServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not Found</h1>');
    });
    try {
      for (const apiKey of [undefined, 'fcs_abcdefgh_0123456789']) {
        const r = await doctor({ baseUrl: page.baseUrl, ...(apiKey ? { apiKey } : {}) });
        expect(r.code).toBe(1);
        expect(r.byName('reachable')).toMatchObject({
          status: 'fail',
          detail: expect.stringMatching(
            /answered HTTP 404 in \d+ ms, not in JSON: not an answer of the Face Compilation Service$/,
          ),
          fix: 'check the base URL',
        });
        // Under --json there is no "above": the fixes are in the checks printed.
        expect(JSON.parse(r.stderr).error.hint).toBe(
          'apply the fix of each failed check (.checks[].fix), then run `facectl doctor` again',
        );
      }
    } finally {
      await page.close();
    }
  });

  it('makes a configuration file readable by others 0600 and says so; warns about a shared directory', async () => {
    const dir = configDir('{"profiles": {}}', 0o644, 0o755);
    const r = await doctor({ baseUrl: service.baseUrl, apiKey: service.key('pro'), env: { FACECTL_CONFIG_DIR: dir } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.byName('config file mode')).toMatchObject({
      status: 'warn',
      detail: `${join(dir, 'config.json')} had mode 0644 (others could read it); changed it to 0600`,
    });
    expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(r.byName('config directory mode')).toMatchObject({ status: 'warn', fix: `chmod 700 ${dir}` });
  });

  it('takes the platform and Node version from the context: no mode checks on Windows, its version in the user agent', async () => {
    const fault = await startFaultServer((_req, res) => json(res, 200, currentKeyBody({})));
    const dir = configDir('{"profiles": {}}', 0o644, 0o755);
    const tc = createTestContext({
      baseUrl: fault.baseUrl,
      apiKey: 'fcs_abcdefgh_0123456789',
      env: { FACECTL_CONFIG_DIR: dir },
    });
    const runtime = { ...tc.ctx.runtime, platform: 'win32' as const, nodeVersion: '99.1.2' };
    try {
      expect(await run(['doctor', '--json'], { ...tc.ctx, runtime }), tc.stderr()).toBe(0);
      const names = (JSON.parse(tc.stdout()).checks as Check[]).map((check) => check.name);
      expect(names).toContain('config file');
      expect(names).not.toContain('config file mode');
      expect(names).not.toContain('config directory mode');
      expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o644);
      expect(fault.requests[0]?.headers['user-agent']).toMatch(/ node\/99\.1\.2$/);
    } finally {
      await tc.close();
      await fault.close();
    }
  });

  it('fails on a configuration file that is not JSON, naming the file', async () => {
    const dir = configDir('{"profiles": ');
    const r = await doctor({ baseUrl: service.baseUrl, apiKey: service.key('pro'), env: { FACECTL_CONFIG_DIR: dir } });
    expect(r.code).toBe(1);
    expect(r.byName('config file')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(join(dir, 'config.json')),
      fix: expect.stringContaining('fix or remove'),
    });
  });

  it('says a FACECTL_CONFIG_DIR that is a file is not a directory, as every other command does', async () => {
    // A ring's find: doctor alone said "check the permissions ... (ENOTDIR)".
    const file = join(configDir('{}'), 'config.json');
    const r = await doctor({ baseUrl: service.baseUrl, apiKey: service.key('pro'), env: { FACECTL_CONFIG_DIR: file } });
    expect(r.code).toBe(1);
    expect(r.byName('config file')).toMatchObject({
      status: 'fail',
      detail: `FACECTL_CONFIG_DIR ${file} is not a directory (a file is where it, or a directory above it, would be)`,
      fix: `set FACECTL_CONFIG_DIR to a directory (a missing one is made), or move ${file} away`,
    });
  });

  it("a profile's base_url that is no usable URL is the failed base url row; the default URL is not checked instead", async () => {
    // A ring's find: doctor reported `base url ok http://127.0.0.1:8787` and probed it, the key row saying "run auth login".
    for (const [given, detail, fix] of [
      ['ftp://x', 'must use http or https: ftp://x', 'run `facectl config set base_url https://api.example.com`'],
      [`${service.baseUrl}/v1`, 'ends in /v1', `run \`facectl config set base_url ${service.baseUrl}\``],
    ] as const) {
      const r = await doctor({ baseUrl: given, apiKey: service.key('pro') });
      expect(r.code).toBe(1);
      expect(r.byName('base url')).toMatchObject({
        status: 'fail',
        detail: expect.stringMatching(new RegExp(`^the base_url of profile "default".*${detail}`)),
        fix: expect.stringContaining(fix),
      });
      expect(r.checks.map((c) => c.name)).not.toContain('reachable');
      expect(r.stdout).not.toContain(DEFAULT_BASE_URL);
    }
  });

  it('warns when plain http goes to a non-loopback host', async () => {
    // A key of its own for that URL (a stored key is sent only to the URL it was saved for).
    const r = await doctor({
      env: { FACECTL_CONFIG_DIR: configDir('{}'), FACECTL_API_KEY: service.key('pro') },
      globals: { baseUrl: 'http://service.invalid' },
    });
    expect(r.code).toBe(1); // the key is not sent (and the host does not resolve)
    expect(r.byName('base url')).toMatchObject({ status: 'warn', fix: 'use an https:// base URL' });
    expect(r.byName('key works')).toMatchObject({ status: 'fail', detail: expect.stringContaining('refuses') });
  });
});

describe('doctor and a stored key saved for another base URL', () => {
  it('fails the key source naming both URLs and sends the key nowhere', async () => {
    const r = await doctor({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: service.key('pro'),
      globals: { baseUrl: service.baseUrl },
    });
    expect(r.code).toBe(1);
    expect(r.byName('key source')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(`saved for http://127.0.0.1:9; it is not sent to ${service.baseUrl}`),
    });
    expect(r.byName('key works').status).toBe('warn');
  });

  it('a profile whose base_url was unset (its key saved for another): the fix logs that profile in, by name', async () => {
    const config = { profiles: { far: { api_key: service.key('pro'), api_key_base_url: service.baseUrl } } };
    const r = await doctor({ config }, ['doctor', '--profile', 'far', '--json']);
    expect(r.code).toBe(1);
    expect(r.byName('key source').fix).toContain(`\`facectl auth login --base-url ${DEFAULT_BASE_URL} --profile far\``);
    expect(r.byName('key source').fix).not.toContain('NAME');
  });
});

describe('doctor proxy check', () => {
  const base = new URL('http://127.0.0.1:8787');
  it('reads the lower-case variable first, as the transport, curl and undici do', () => {
    const env = { http_proxy: 'http://lower:3128', HTTP_PROXY: 'http://upper:3128' };
    expect(checkProxy(env, new URL('http://api.example.com')).detail).toBe(
      'requests to api.example.com go through http_proxy=http://lower:3128',
    );
  });

  it('a SOCKS proxy is a failed reachability check naming it, not a crash', async () => {
    const r = await doctor({
      // Not loopback (never proxied); refused before any connection is opened.
      baseUrl: 'https://api.facectl.test:9',
      apiKey: 'fcs_abcdefgh_0123456789',
      env: { FACECTL_CONFIG_DIR: configDir('{}'), https_proxy: 'socks5://127.0.0.1:1080' },
    });
    expect(r.code).toBe(1);
    expect(r.byName('reachable')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('SOCKS proxies are not supported'),
    });
  });

  it('reports no proxy, a proxy in effect, and a NO_PROXY bypass', () => {
    expect(checkProxy({}, base)).toMatchObject({ status: 'ok', detail: expect.stringContaining('no proxy') });
    // A loopback base URL is never proxied (the key would cross the proxy in plain http).
    expect(checkProxy({ HTTP_PROXY: 'http://u:secret@proxy:3128' }, base)).toMatchObject({
      status: 'ok',
      detail: 'HTTP_PROXY=http://***@proxy:3128 is not used for the loopback address 127.0.0.1:8787 (never proxied)',
    });
    expect(
      checkProxy({ HTTP_PROXY: 'http://proxy:3128', NO_PROXY: '10.0.0.0/8' }, new URL('http://10.1.2.3')),
    ).toMatchObject({
      status: 'ok',
      detail: 'HTTP_PROXY=http://proxy:3128 is bypassed for 10.1.2.3 by NO_PROXY entry "10.0.0.0/8"',
    });
    const remote = new URL('https://api.example.com');
    expect(checkProxy({ HTTPS_PROXY: 'http://proxy:3128', NO_PROXY: '.example.com' }, remote).detail).toContain(
      'bypassed',
    );
    expect(checkProxy({ HTTPS_PROXY: 'http://proxy:3128' }, remote)).toMatchObject({
      status: 'ok',
      detail: 'requests to api.example.com go through HTTPS_PROXY=http://proxy:3128',
    });
    expect(checkProxy({ HTTPS_PROXY: 'http://[bad' }, remote).status).toBe('fail');
  });
});

import { describe, expect, it } from 'vitest';
import { runLogin } from '../../src/commands/auth/login.js';
import { runStatus } from '../../src/commands/auth/status.js';
import { keyIdentity } from '../../src/commands/docs/batch-lines.js';
import { keyPrefix } from '../../src/config/credentials.js';
import { ExitCode } from '../../src/errors.js';
import { json, startFaultServer } from '../helpers/fault-server.js';
import { call, expectContract } from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';
import { createTestContext } from '../helpers/test-context.js';
import { runInProcess as cli } from '../helpers/unit-harness.js';

const service = useService();

const terminal = { stdinIsTTY: true, stdoutIsTTY: true, env: { NO_COLOR: '1' } };

describe('auth login', () => {
  it('asks for the key on a terminal, checks it, and stores it in the profile', async () => {
    const key = service.key('pro');
    const { code, stderr, tc } = await cli(['auth', 'login'], {
      ...terminal,
      answers: [key],
      config: { profiles: { default: { base_url: service.baseUrl } } },
    });
    expect(code).toBe(0);
    expect(tc.prompts).toEqual([{ kind: 'password', message: 'Paste your API key:' }]);
    tc.assertNoLeftoverAnswers();
    expect(tc.config.data.profiles?.default).toEqual({
      base_url: service.baseUrl,
      api_key: key,
      api_key_base_url: service.baseUrl,
    });
    expect(stderr).toContain(
      `✓ Logged in to ${service.baseUrl} with key ${key.slice(0, 12)}… (profile default, pro plan)`,
    );
    expect(stderr).not.toContain(key);
  });

  it('reads the key from stdin with --api-key-stdin and stores --base-url too', async () => {
    const key = service.key('standard');
    const { code, stdout, tc } = await cli(
      ['auth', 'login', '--api-key-stdin', '--base-url', service.baseUrl, '--profile', 'ci', '--json'],
      { stdin: `${key}\n` },
    );
    expect(code).toBe(0);
    expect(tc.config.data.profiles?.ci).toEqual({
      api_key: key,
      api_key_base_url: service.baseUrl,
      base_url: service.baseUrl,
    });
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({
      profile: 'ci',
      base_url: service.baseUrl,
      key_prefix: key.slice(0, 12),
      plan: 'standard',
    });
    expect(stdout).not.toContain(key);
  });

  it('--api-key-stdin while FACECTL_API_KEY is set: stored, with the warning that the variable takes precedence', async () => {
    const key = service.key('standard');
    const { code, stderr, tc } = await cli(['auth', 'login', '--api-key-stdin', '--base-url', service.baseUrl], {
      stdin: `${key}\n`,
      env: { FACECTL_API_KEY: service.key('pro') },
    });
    expect(code, stderr).toBe(0);
    expect(tc.config.data.profiles?.default?.api_key).toBe(key);
    expect(stderr).toContain(`stored key ${key.slice(0, 12)}… in profile default`);
    expect(stderr).toContain(
      'FACECTL_API_KEY is set to another key, which is used instead of the stored one (`unset FACECTL_API_KEY` to use it)',
    );
  });

  it('a key the service refuses: exit 3, nothing stored', async () => {
    const wrong = `${service.key('pro').slice(0, 13)}${'x'.repeat(32)}`;
    const { code, stderr, tc } = await cli(['auth', 'login', '--api-key-stdin', '--base-url', service.baseUrl], {
      stdin: `${wrong}\n`,
    });
    expect(code).toBe(ExitCode.auth);
    expect(stderr).toContain(`error: ${service.baseUrl} refused this API key; nothing was stored`);
    expect(tc.config.data.profiles).toBeUndefined();
  });

  it('without a terminal or --api-key-stdin: exit 2, nothing sent', async () => {
    const before = service.stats.requests;
    const { code, stderr } = await cli(['auth', 'login', '--base-url', service.baseUrl]);
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toContain('no API key given');
    expect(stderr.trimEnd().split('\n').at(-1)).toContain('--api-key-stdin');
    expect(service.stats.requests).toBe(before);
    // On a terminal with stdout piped (`auth login | cat`), it says why it did not ask.
    const piped = await cli(['auth', 'login', '--base-url', service.baseUrl], { stdinIsTTY: true, stdoutIsTTY: false });
    expect(piped.code).toBe(ExitCode.usage);
    expect(piped.stderr).toContain('reads it with --api-key-stdin (standard output is not a terminal)');
  });

  it('a key with a newline inside is refused locally: exit 2, the key never sent', async () => {
    const before = service.stats.requests;
    const tc = createTestContext({ ...terminal, answers: ['fcs_abc\r\nX-Evil: 1'], baseUrl: service.baseUrl });
    await expect(runLogin(tc.ctx)).rejects.toThrow(/whitespace, control or non-ASCII/);
    // One request: the probe before the prompt, which carries no key.
    expect(service.stats.requests).toBe(before + 1);
  });

  it('a base URL that does not answer is said before the key is asked for (a ring: pasted, then thrown away)', async () => {
    const { code, stderr, tc } = await cli(['auth', 'login', '--base-url', 'http://127.0.0.1:9'], {
      ...terminal,
      answers: [service.key('pro')],
    });
    expect(code).toBe(ExitCode.network);
    expect(stderr).toContain('error: cannot reach http://127.0.0.1:9');
    expect(tc.prompts).toEqual([]);
    expect(tc.config.data.profiles).toBeUndefined();
  });
});

describe('auth logout', () => {
  it('removes the key and keeps the base URL', async () => {
    const { code, stderr, tc } = await cli(['auth', 'logout'], {
      ...terminal,
      apiKey: service.key('pro'),
      baseUrl: service.baseUrl,
    });
    expect(code).toBe(0);
    expect(tc.config.data.profiles?.default).toEqual({ base_url: service.baseUrl });
    expect(stderr).toContain('✓ Removed the API key of profile default');
  });

  it('with no key stored says so and exits 0', async () => {
    const { code, stdout } = await cli(['auth', 'logout', '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ profile: 'default', removed: false });
  });
});

describe('auth status', () => {
  it('says the key came from the environment when it overrides the stored one', async () => {
    const stored = service.key('free');
    const fromEnv = service.key('pro');
    const { code, stdout } = await cli(['auth', 'status', '--json'], {
      apiKey: stored,
      baseUrl: service.baseUrl,
      env: { FACECTL_API_KEY: fromEnv },
    });
    expect(code).toBe(0);
    const status = JSON.parse(stdout);
    expect(status).toMatchObject({
      profile: 'default',
      base_url: service.baseUrl,
      base_url_source: 'profile',
      logged_in: true,
      key_prefix: fromEnv.slice(0, 12),
      key_source: 'FACECTL_API_KEY',
      // The stored key is not the one in use: where it was stored for is not said of this one.
      key_base_url: null,
      plan: 'pro',
      scopes: ['v1:*'],
      expires_at: null,
      budget_left_usd: null,
    });
    expect(stdout).not.toContain(fromEnv);
    expect(stdout).not.toContain(stored);
  });

  it('a key not shaped as the service makes them shows at most 4 characters (a quarter of it), never half', async () => {
    for (const [key, shown] of [
      ['abcdefghijklmnopqrstuv', 'abcd'], // 22 characters: it was 11 of them
      ['sk-live-0123456789abcdefghij', 'sk-l'],
      ['short123', 'sh'],
    ] as const) {
      const { code, stdout, stderr } = await cli(['auth', 'status', '--json'], {
        baseUrl: service.baseUrl,
        env: { FACECTL_API_KEY: key },
      });
      // The service does not know it: 401, exit 3; what facectl shows of it is the point.
      expect(code, stderr).toBe(ExitCode.auth);
      // A key the service refuses is no login (a newcomer's CI read `logged_in: true` beside the error).
      expect(JSON.parse(stdout)).toMatchObject({ logged_in: false, key_prefix: shown, key_source: 'FACECTL_API_KEY' });
      expect(`${stdout}${stderr}`).not.toContain(key.slice(0, shown.length + 1));
    }
    // A key of the service's shape still shows its public prefix, fcs_ and its id.
    expect(keyPrefix(service.key('pro'))).toBe(service.key('pro').slice(0, 12));
    expect(keyPrefix('fcs_abcdefgh_0123456789abcdefABCDEFGHIJ0123')).toBe('fcs_abcdefgh');
  });

  it('what a batch records of such a key tells two of them apart with no more of either than its 4 characters', () => {
    const [a, b] = ['testAAAAAAAAAAAAAAAAAAAAAA', 'testBBBBBBBBBBBBBBBBBBBBBB'];
    expect(keyIdentity(a)).toMatch(/^test #[0-9a-f]{12}$/);
    expect(keyIdentity(a)).not.toBe(keyIdentity(b));
    expect(keyIdentity(a)).toBe(keyIdentity(a));
    expect(keyIdentity(a)).not.toContain('testA');
    // A service key: its prefix, as every batch recorded before.
    expect(keyIdentity(service.key('pro'))).toBe(service.key('pro').slice(0, 12));
  });

  it('shows the budget left of a key with a budget, from the service', async () => {
    const created = expectContract(
      'createApiKey',
      await call(service, 'createApiKey', { key: service.key('pro'), body: { name: 'ci', budget_usd: 2.5 } }),
    );
    const tc = createTestContext({ env: { FACECTL_API_KEY: created.key, FACECTL_BASE_URL: service.baseUrl } });
    const status = await runStatus(tc.ctx);
    await tc.close();
    expect(status).toMatchObject({
      key_name: 'ci',
      budget_usd: 2.5,
      spent_usd: 0,
      budget_left_usd: 2.5,
      base_url_source: 'FACECTL_BASE_URL',
    });
    const lines = tc.stdout().trimEnd().split('\n');
    expect(lines).toContain('budget left\t$2.50 of $2.50');
    expect(lines).toContain(`key\t${created.key.slice(0, 12)}… (from FACECTL_API_KEY)`);
  });

  it('not logged in: the local facts on stdout, exit 3 with the fix last', async () => {
    const { code, stdout, stderr } = await cli(['auth', 'status'], { baseUrl: service.baseUrl });
    expect(code).toBe(ExitCode.auth);
    expect(stdout).toContain(`base url\t${service.baseUrl} (from profile)`);
    expect(stdout).toContain('key\tnone');
    expect(stderr).toContain('error: not logged in');
    expect(stderr.trimEnd().split('\n').at(-1)).toBe('run `facectl auth login`, or set FACECTL_API_KEY');
  });

  it.each([
    ['a service key', 'fcs_I89XS6jW_FckpMAsSjqRtUvWxYz0123456789ab', 'fcs_I89XS6jW_…'],
    ['a key of another form (pasted by mistake)', 'sk-LIVE-abcdefghijklmnopqrstuvwxyz0123', '[redacted]'],
    ['a short one', 'fcs_short', '[redacted]'],
  ])(
    'the key sent, quoted back by a service (%s): never shown whole, in a refusal or doctor',
    async (_, key, shown) => {
      const echo = await startFaultServer((req, res) =>
        json(res, 401, { detail: `key ${String(req.headers.authorization).slice(7)} is not valid` }),
      );
      try {
        const refused = await cli(['auth', 'status', '--json'], {
          env: { FACECTL_API_KEY: key, FACECTL_BASE_URL: echo.baseUrl },
        });
        expect(refused.code).toBe(ExitCode.auth);
        expect(JSON.parse(refused.stdout).error).toBe(
          `the service refused the API key (401: key ${shown} is not valid)`,
        );
        expect(refused.stdout + refused.stderr).not.toContain(key);
        const doctor = await cli(['doctor', '--json'], {
          env: { FACECTL_API_KEY: key, FACECTL_BASE_URL: echo.baseUrl },
        });
        expect(doctor.stdout + doctor.stderr).toContain(`key ${shown} is not valid`);
        expect(doctor.stdout + doctor.stderr).not.toContain(key);
      } finally {
        await echo.close();
      }
    },
  );

  it('an answer that echoes the key sent in its fields (name, plan): shown as [redacted]', async () => {
    const key = 'sk-LIVE-abcdefghijklmnopqrstuvwxyz0123';
    const echo = await startFaultServer((req, res) => {
      const sent = String(req.headers.authorization);
      json(res, 200, { id: 'key_1', name: sent, plan: sent, scopes: ['v1:*'], expires_at: null });
    });
    try {
      for (const args of [
        ['auth', 'status'],
        ['auth', 'status', '--json'],
      ]) {
        const { code, stdout, stderr } = await cli(args, {
          env: { FACECTL_API_KEY: key, FACECTL_BASE_URL: echo.baseUrl },
        });
        expect(code, stderr).toBe(0);
        expect(stdout).toContain('Bearer [redacted]');
        expect(stdout + stderr).not.toContain(key);
      }
    } finally {
      await echo.close();
    }
  });

  it.each([
    ['a quote', 'Ab"Cd"Ef12/xyz'],
    ['a backslash', 'a.b*c+d(e)[f]$^|x?{2}\\'],
  ])(
    'a key with %s, echoed in JSON (so written escaped): read as the answer it is, shown as [redacted]',
    async (_, key) => {
      const echo = await startFaultServer((req, res) => {
        const sent = String(req.headers.authorization).slice(7);
        json(res, 200, { id: 'key_1', name: sent, plan: 'pro', scopes: ['v1:*'], expires_at: null });
      });
      try {
        const { code, stdout, stderr } = await cli(['auth', 'status', '--json'], {
          env: { FACECTL_API_KEY: key, FACECTL_BASE_URL: echo.baseUrl },
        });
        expect(code, stderr).toBe(0);
        expect(JSON.parse(stdout)).toMatchObject({ key_name: '[redacted]', plan: 'pro' });
        expect(stdout + stderr).not.toContain(key);
        expect(stdout + stderr).not.toContain(JSON.stringify(key).slice(1, -1));
      } finally {
        await echo.close();
      }
    },
  );

  it.each([
    ['with / escaped as PHP writes JSON', 'sk_live/AbCdEf+GhIj=KlMnOp/QrStUv', (k: string) => k.replaceAll('/', '\\/')],
    ['percent-encoded', 'sk_live/AbCdEf+GhIj=KlMnOp/QrStUv', encodeURIComponent],
    ['a service key without its fcs_', 'fcs_egmSyObs_OuPGabcdefghijklmnopqrstuvwxyz012', (k: string) => k.slice(4)],
    ['a service key, its secret alone', 'fcs_egmSyObs_OuPGabcdefghijklmnopqrstuvwxyz012', (k: string) => k.slice(13)],
    [
      'with + and = as \\u00XX (as .NET writes JSON)',
      'sk_live/AbCdEf+GhIj=KlMnOp/QrStUv',
      (k: string) => k.replace(/[+=]/g, (c) => `\\u00${c.charCodeAt(0).toString(16).toUpperCase()}`),
    ],
    [
      'every character as \\u00XX',
      'fcs_egmSyObs_OuPGabcdefghijklmnopqrstuvwxyz012',
      (k: string) => [...k].map((c) => `\\u00${c.charCodeAt(0).toString(16)}`).join(''),
    ],
  ])('a key echoed %s in a refusal: not shown (a breaker found it whole)', async (_, key, form) => {
    const echo = await startFaultServer((req, res) => {
      const sent = String(req.headers.authorization).slice(7);
      res.writeHead(403, { 'content-type': 'application/json', 'x-echo': form(sent) });
      res.end(`{"detail":"forbidden for key ${form(sent)}"}`);
    });
    try {
      const env = { FACECTL_API_KEY: key, FACECTL_BASE_URL: echo.baseUrl };
      for (const args of [
        ['faces', 'get', 'ada'],
        ['faces', 'get', 'ada', '--json', '--debug'],
        ['auth', 'status'],
      ]) {
        const { code, stdout, stderr } = await cli(args, { env });
        expect(code, `${args.join(' ')}: ${stderr}`).toBe(ExitCode.refused);
        expect(stdout + stderr).toContain('forbidden for key ');
        expect(stdout + stderr).not.toContain(form(key));
        expect(stdout + stderr).not.toContain(key.slice(4, -4));
      }
    } finally {
      await echo.close();
    }
  });

  it('a service key inside a code (`x_fcs_…`): cut to its prefix there too (a ring saw it whole on the status line)', async () => {
    const key = 'fcs_AbCdEfGh_Q7r9T2v4X6z8B1d3F5h7J9k2M4n6P8q0';
    const echo = await startFaultServer((_req, res) => json(res, 400, { detail: 'no', code: `x_${key}` }));
    try {
      const { code, stdout, stderr } = await cli(['faces', 'get', 'ada'], {
        env: { FACECTL_API_KEY: 'fcs_ZzZzZzZz_another0key0entirely0000', FACECTL_BASE_URL: echo.baseUrl },
      });
      expect(code).toBe(ExitCode.usage);
      expect(stderr).toContain('x_fcs_AbCdEfGh_…');
      expect(stdout + stderr).not.toContain(key);
    } finally {
      await echo.close();
    }
  });

  it('a JSON escape that is itself escaped stays as the service wrote it (`\\\\u0041` is not an A)', async () => {
    const key = 'sk_live/AbCdEf+GhIj=KlMnOp/QrStUv';
    const echo = await startFaultServer((_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(String.raw`{"detail":"path C:\u0041 and sk_live/AbCdEf+GhIj=KlMnOp/QrStUv"}`);
    });
    try {
      const { stderr } = await cli(['faces', 'get', 'ada'], {
        env: { FACECTL_API_KEY: key, FACECTL_BASE_URL: echo.baseUrl },
      });
      expect(stderr).toContain(String.raw`error: path C:A and [redacted]`);
    } finally {
      await echo.close();
    }
  });

  it('a key echoed in headers (a redirect Location, another): not in the error, nor in `api -i`', async () => {
    const key = 'sk-LIVE-abcdefghijklmnopqrstuvwxyz0123';
    const echo = await startFaultServer((req, res) => {
      const sent = String(req.headers.authorization).slice(7);
      res.writeHead(302, { location: `/v1/elsewhere?key=${sent}`, 'x-echo': sent });
      res.end();
    });
    try {
      const env = { FACECTL_API_KEY: key, FACECTL_BASE_URL: echo.baseUrl };
      for (const args of [
        ['auth', 'status'],
        ['auth', 'status', '--json'],
        ['api', '/v1/auth/api-keys/current', '-i'],
      ]) {
        const { code, stdout, stderr } = await cli(args, { env });
        expect(code, `${args.join(' ')}: ${stderr}`).not.toBe(0);
        expect(stdout + stderr).toContain('[redacted]');
        expect(stdout + stderr).not.toContain(key);
      }
    } finally {
      await echo.close();
    }
  });

  it('a service that is down: the local facts, then exit 8', async () => {
    const { code, stdout, stderr } = await cli(['auth', 'status'], {
      apiKey: service.key('pro'),
      baseUrl: 'http://127.0.0.1:9',
    });
    expect(code).toBe(ExitCode.network);
    expect(stdout).toContain('base url\thttp://127.0.0.1:9 (from profile)');
    expect(stderr).toContain('cannot reach http://127.0.0.1:9');
    expect(stderr).toContain('is `facectl serve` running?');
  });
});

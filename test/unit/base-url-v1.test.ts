import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultServer, startFaultServer } from '../helpers/fault-server.js';
import { runInProcess as cli } from '../helpers/unit-harness.js';

/**
 * Issue 22 item 7: a base URL ending in /v1 (or /v1/) asked for /v1/v1/... and got `no endpoint`, or a
 * talk about keys bound to another URL. It is refused before anything is sent (exit 2), saying "drop
 * the /v1" with the URL to use, in the message and in the fix for where it came from.
 */

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(() => server.close());

describe('a base URL ending in /v1: drop the /v1', () => {
  it.each([
    ['--base-url', (base: string) => ({ argv: ['--base-url', `${base}/v1`] }), 'run it with --base-url {url}'],
    [
      'FACECTL_BASE_URL',
      (base: string) => ({ env: { FACECTL_BASE_URL: `${base}/v1/` } }),
      'run `export FACECTL_BASE_URL={url}`',
    ],
    [
      'a profile',
      (base: string) => ({
        config: {
          profiles: { default: { base_url: `${base}/v1`, api_key: 'fcs_saved_key_0123', api_key_base_url: base } },
        },
      }),
      'run `facectl config set base_url {url}`',
    ],
  ])('from %s: exit 2, nothing sent, the message and the fix name the URL to use', async (_from, given, fix) => {
    const base = server.baseUrl;
    const { argv = [], ...options } = given(base) as { argv?: string[]; env?: Record<string, string>; config?: object };
    const before = server.requests.length;
    const result = await cli(['faces', 'get', 'ada', ...argv], {
      ...options,
      env: { FACECTL_API_KEY: 'fcs_env_key_0123', ...options.env },
    } as never);
    expect(result.code).toBe(2);
    expect(server.requests.length).toBe(before);
    const [message, hint] = result.stderr.trimEnd().split('\n');
    expect(message).toMatch(/ends in \/v1: drop the \/v1 and use /);
    expect(message).toContain(`use ${base}`);
    expect(hint).toContain(fix.replace('{url}', base));
    expect(result.stderr).not.toMatch(/no endpoint|\/v1\/v1|saved for/);
  });

  it('a key stored for the URL without /v1 is not talked about: the /v1 is', async () => {
    const base = server.baseUrl;
    const result = await cli(['auth', 'status', '--base-url', `${base}/v1`], {
      config: { profiles: { default: { api_key: 'fcs_saved_key_0123', api_key_base_url: base } } },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('drop the /v1');
    expect(result.stderr).not.toContain('saved for');
  });

  it('config set base_url with /v1 is refused, naming the URL to set', async () => {
    const result = await cli(['config', 'set', 'base_url', 'https://api.example.com/v1/']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('drop the /v1 and use https://api.example.com');
    expect(result.stderr).toContain('run `facectl config set base_url https://api.example.com`');
    expect(result.tc.config.data.profiles).toBeUndefined();
  });

  it('a path before /v1 is kept: https://host/api/v1 -> https://host/api', async () => {
    const result = await cli(['config', 'set', 'base_url', 'https://api.example.com/api/v1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('use https://api.example.com/api');
  });

  it('auth login --base-url .../v1 is refused before the key is checked or stored', async () => {
    const before = server.requests.length;
    const result = await cli(['auth', 'login', '--api-key-stdin', '--base-url', `${server.baseUrl}/v1`], {
      stdin: 'fcs_new_key_0123\n',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('drop the /v1');
    expect(server.requests.length).toBe(before);
    expect(result.tc.config.data.profiles).toBeUndefined();
  });
});

describe('a base URL without its scheme: the fix names the URL meant', () => {
  it.each([
    ['127.0.0.1:8787', 'http://127.0.0.1:8787'],
    ['localhost:8787', 'http://localhost:8787'],
    ['[::1]:8787', 'http://[::1]:8787'],
    ['api.example.org', 'https://api.example.org'],
    ['api.example.org:8443/fcs', 'https://api.example.org:8443/fcs'],
  ])('--base-url %s: exit 2, "run it with --base-url %s"', async (given, meant) => {
    const result = await cli(['faces', 'get', 'ada', '--base-url', given], {
      env: { FACECTL_API_KEY: 'fcs_env_key_0123' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `error: --base-url: not a valid URL (no http:// or https://): ${given}\nrun it with --base-url ${meant}\n`,
    );
  });

  it.each(['htp:/api.example.org', 'htps://api.example.org'])(
    '--base-url %s (a scheme mistyped): "must use http or https", no URL made of the scheme as a host',
    async (given) => {
      const result = await cli(['faces', 'get', 'ada', '--base-url', given], {
        env: { FACECTL_API_KEY: 'fcs_env_key_0123' },
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `error: --base-url: must use http or https: ${given}\nrun it with --base-url https://api.example.com\n`,
      );
    },
  );

  it('FACECTL_BASE_URL=127.0.0.1:8787: exit 2, the fix is a command a shell runs (`export`, not `set`)', async () => {
    const result = await cli(['faces', 'get', 'ada'], {
      env: { FACECTL_API_KEY: 'fcs_env_key_0123', FACECTL_BASE_URL: '127.0.0.1:8787' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'error: FACECTL_BASE_URL: not a valid URL (no http:// or https://): 127.0.0.1:8787\n' +
        'run `export FACECTL_BASE_URL=http://127.0.0.1:8787`\n',
    );
  });

  it('config set base_url 127.0.0.1:8787: nothing set, the command to run names http://127.0.0.1:8787', async () => {
    const result = await cli(['config', 'set', 'base_url', '127.0.0.1:8787']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('run `facectl config set base_url http://127.0.0.1:8787`');
    expect(result.tc.config.data.profiles).toBeUndefined();
  });
});

describe('placeholders in the commands hints print: in capitals, no <...> a shell reads as a redirection', () => {
  it('a key saved for another base URL: `facectl auth login --base-url URL --profile P`, P the profile in use', async () => {
    // A breaker's paste of `--profile NAME` stored the key where the failing command (`--profile r`) did not read.
    const stored = { api_key: 'fcs_saved_key_0123', api_key_base_url: server.baseUrl };
    for (const [args, profile] of [
      [[], 'default'],
      [['--profile', 'r'], 'r'],
    ] as const) {
      const result = await cli(['faces', 'get', 'ada', '--base-url', 'http://127.0.0.1:1', ...args], {
        config: { profiles: { default: stored, r: stored } },
      });
      expect(result.code).toBe(3);
      expect(result.stderr).toContain(`\`facectl auth login --base-url http://127.0.0.1:1 --profile ${profile}\``);
      expect(result.stderr).not.toMatch(/[<>]/);
    }
  });

  it('config set api_key_base_url: the commands to run say URL', async () => {
    const result = await cli(['config', 'set', 'api_key_base_url', server.baseUrl]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('run `facectl auth login --base-url URL` to store a key for another base URL');
    expect(result.stderr).toContain('`facectl auth login --stored-key --base-url URL`');
    expect(result.stderr).not.toMatch(/[<>]/);
  });
});

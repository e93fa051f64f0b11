import { describe, expect, it } from 'vitest';
import { createKey, useService } from '../helpers/service-suite.js';
import { argv, runInProcess as cli, expectRefused } from '../helpers/unit-harness.js';

/**
 * A profile name no profile can have (`--profile 'a b'`, `--profile ''`) is refused before anything is
 * sent, naming the flag or the variable: exit 2 means nothing was sent, and no key made that could not be saved.
 */

const service = useService();

const keyCount = () => [...service.store.values('keys')].length;

describe('an invalid profile name, for a command that saves into it', () => {
  it('keys create --save --profile="a b": exit 2 naming --profile, no request, no key made, config unchanged', async () => {
    const before = keyCount();
    const result = await expectRefused(
      service,
      ['keys', 'create', '--save', '--profile=a b', '--name', 'orphan', '--json'],
      '"message":"invalid profile name \\"a b\\" (--profile)"',
    );
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain('save_failed');
    expect(keyCount()).toBe(before);
    expect(result.tc.config.data).toEqual({
      profiles: { default: { api_key: service.key('pro'), base_url: service.baseUrl } },
    });
  });

  it('keys create --save with FACECTL_PROFILE="a b": names the variable, nothing sent', async () => {
    const before = keyCount();
    const result = await expectRefused(
      service,
      argv`keys create --save --name orphan`,
      'invalid profile name "a b" (FACECTL_PROFILE)',
      {
        env: { FACECTL_PROFILE: 'a b' },
      },
    );
    expect(result.stdout).toBe('');
    expect(keyCount()).toBe(before);
  });

  it('auth login --profile="a b": refused before the key is checked with the service, nothing stored', async () => {
    const creating = await createKey(service, service.key('pro'), { name: 'to-store' });
    const result = await expectRefused(
      service,
      ['auth', 'login', '--api-key-stdin', '--profile=a b'],
      'invalid profile name "a b" (--profile)',
      { stdin: `${creating.key}\n` },
    );
    expect(result.stdout).toBe('');
    expect(result.tc.config.data).toEqual({
      profiles: { default: { api_key: service.key('pro'), base_url: service.baseUrl } },
    });
  });

  it("auth login --profile '' with no service to reach: exit 2, not 8", async () => {
    const { code, stdout, stderr, tc } = await cli(
      ['auth', 'login', '--api-key-stdin', '--profile', '', '--base-url', 'http://127.0.0.1:1'],
      { stdin: `fcs_${'x'.repeat(40)}\n` },
    );
    expect(code, stderr).toBe(2);
    expect(stderr).toContain('invalid profile name "" (--profile)');
    expect(stdout).toBe('');
    expect(tc.config.data).toEqual({});
  });
});

describe('an invalid or unknown --profile elsewhere', () => {
  it("auth status --profile '': the invalid-name error, no hint naming a profile that cannot be", async () => {
    const result = await expectRefused(
      service,
      ['auth', 'status', '--profile', ''],
      ['invalid profile name "" (--profile)', 'use letters, digits, - and _'],
    );
    expect(result.stderr).not.toContain('no profile named');
    expect(result.stderr).not.toContain('auth login --profile');
  });

  it('auth switch a --profile nosuch: refused like any command, exit 2, default unchanged', async () => {
    const config = { profiles: { a: { base_url: service.baseUrl } } };
    const result = await expectRefused(
      service,
      argv`auth switch a --profile nosuch`,
      'no profile named "nosuch" (--profile)',
      {
        config,
      },
    );
    expect(result.stdout).toBe('');
    expect(result.tc.config.data.default_profile).toBeUndefined();
  });

  it("auth switch a --profile 'a b': the invalid-name error", async () => {
    const { code, stderr, tc } = await cli(['auth', 'switch', 'a', '--profile', 'a b'], {
      config: { profiles: { a: {} } },
    });
    expect(code, stderr).toBe(2);
    expect(stderr).toContain('invalid profile name "a b" (--profile)');
    expect(tc.config.data.default_profile).toBeUndefined();
  });

  it('auth switch a --profile a (a known profile) switches as before', async () => {
    const { code, stderr, tc } = await cli(argv`auth switch a --profile a`, { config: { profiles: { a: {} } } });
    expect(code, stderr).toBe(0);
    expect(tc.config.data.default_profile).toBe('a');
  });
});

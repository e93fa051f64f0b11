import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../helpers/run-cli.js';
import { checkFlags } from '../../src/commands/flag-check.js';
import createKey, { runCreateKey } from '../../src/commands/keys/create.js';
import { CancelError, UsageError } from '../../src/errors.js';
import { contextFor, requestCount, runCommand } from '../helpers/command-harness.js';
import { call, expectContract } from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';
import { argv } from '../helpers/unit-harness.js';

const service = useService();

describe('keys create: run()', () => {
  it('creates a key with every field, prints the secret once and the service stores what was asked', async () => {
    const tc = contextFor(service, { plan: 'pro' });
    const key = await runCreateKey(tc.ctx, {
      name: 'ci',
      expiresInDays: 30,
      scopes: ['v1:compile', 'v1:faces:read'],
      budgetUsd: 2.5,
      allowedFaceIds: ['face_a', 'face_b'],
      allowedLlmModels: ['gpt-x'],
      save: false,
      yes: false,
    });
    await tc.close();
    expect(key.key).toMatch(/^fcs_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}$/);
    // Piped: tab-separated field lines, the secret among them, no note for people.
    const lines = tc.stdout().trimEnd().split('\n');
    expect(lines).toContain(`key\t${key.key}`);
    expect(lines).toContain('name\tci');
    expect(lines).toContain('budget_usd\t2.5');
    expect(lines).toContain('allowed_face_ids\tface_a,face_b');
    expect(tc.stderr()).toBe('');

    // What the service stored, read back with the new key itself.
    const current = expectContract('getCurrentApiKey', await call(service, 'getCurrentApiKey', { key: key.key }), 200);
    expect(current).toMatchObject({
      name: 'ci',
      budget_usd: 2.5,
      allowed_face_ids: ['face_a', 'face_b'],
      allowed_llm_models: ['gpt-x'],
      scopes: ['v1:compile', 'v1:faces:read'],
    });
    expect(Date.parse(current.expires_at) - Date.parse(current.created_at)).toBe(30 * 86_400_000);
    expect(JSON.stringify(current)).not.toContain(key.key);
  });

  it('a key without limits: budget_usd unlimited (as auth status says; "none" read as no budget left), expires never, any face', async () => {
    const tc = contextFor(service);
    await runCreateKey(tc.ctx, { name: 'open', save: false, yes: false });
    await tc.close();
    const lines = tc.stdout().trimEnd().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining(['budget_usd\tunlimited', 'expires_at\tnever', 'allowed_face_ids\tany']),
    );
  });

  it('prints exactly the service object under --json', async () => {
    const tc = contextFor(service, { globals: { json: true } });
    const key = await runCreateKey(tc.ctx, { name: 'json', save: false, yes: false });
    await tc.close();
    expect(JSON.parse(tc.stdout())).toEqual(key);
  });

  it('facectl api POST /v1/auth/api-keys with a --jq filter that leaves the secret out: the same warning; one that prints it: none', async () => {
    const warning = {
      warning:
        'the secret (.key) is shown only now, and the --jq filter left it out: it is lost (`keys create --save` keeps it)',
    };
    // With -i the filter sees {status, headers, body}: `.key` is null there (a breaker lost a key so).
    for (const [args, printed] of [
      [['--jq', '.id'], /^key_\w+\n$/],
      [['-i', '--jq', '.key'], /^null\n$/],
    ] as const) {
      const result = await runCommand(service, ['api', '-X', 'POST', '/v1/auth/api-keys', '-f', 'name=x', ...args]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(printed);
      const said = result.stderr
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown);
      expect(said).toEqual([warning]);
    }
    for (const args of [
      ['--jq', '.key'],
      ['-i', '--jq', '.body.key'],
      ['--jq', '.'],
    ]) {
      const shown = await runCommand(service, ['api', '-X', 'POST', '/v1/auth/api-keys', '-f', 'name=x', ...args]);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(/fcs_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}/);
      expect(shown.stderr).toBe('');
    }
    // A filter that fails (a ring's find: jq's message quoted the secret, cut, and nothing was printed): the whole
    // answer on stdout, jq's message not shown, exit 1.
    for (const filter of ['.key | .[4:] | error', '.key | ltrimstr("fcs_") | error', '.key | explode | error']) {
      const failed = await runCommand(service, [
        'api',
        '-X',
        'POST',
        '/v1/auth/api-keys',
        '-f',
        'name=x',
        '--jq',
        filter,
      ]);
      expect(failed.code).toBe(1);
      const key = (JSON.parse(failed.stdout) as { key: string }).key;
      expect(key).toMatch(/^fcs_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}$/);
      expect(JSON.parse(failed.stderr).error).toEqual({
        code: 'jq_error',
        message: "--jq: the filter failed (jq's message is not shown: the answer holds a key it may quote)",
        hint:
          'POST /v1/auth/api-keys answered 201 all the same: the key was created; its whole answer is printed ' +
          'instead, as its secret is shown only now',
      });
      expect(failed.stderr).not.toContain(key.slice(13, 21));
    }
  });

  it('piped with a --jq filter that leaves the secret out: a warning that it is lost; one that prints it: none', async () => {
    const result = await runCommand(service, ['keys', 'create', '--name', 'jq', '--jq', '.key_prefix']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^fcs_[A-Za-z0-9]{8}\n$/);
    expect(
      result.stderr
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      { warning: 'the secret (.key) is shown only now, and the --jq filter left it out: it is lost (--save keeps it)' },
    ]);
    // At a terminal too (it said only "Save this key now" there).
    const atTerminal = await runCommand(service, ['keys', 'create', '--name', 'jq-tty', '--jq', '.key_prefix'], {
      stderrIsTTY: true,
    });
    expect(atTerminal.stderr).toContain('the --jq filter left it out: it is lost');
    expect(atTerminal.stderr).not.toContain('Save this key now');
    // A filter that prints it: no warning.
    for (const expression of ['.key', '.', '{key, id}']) {
      const shown = await runCommand(service, ['keys', 'create', '--name', 'jq-key', '--jq', expression]);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(/fcs_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}/);
      expect(shown.stderr).toBe('');
    }
    // With --save it is kept: no warning.
    const saved = await runCommand(service, [
      'keys',
      'create',
      '--name',
      'jq-saved',
      '--save',
      '--yes',
      '--jq',
      '.key_prefix',
    ]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stderr).not.toContain('shown only now');
  });

  it('a --jq filter that fails on the answer: the whole answer is printed instead (its secret shown once), exit 1', async () => {
    const result = await runCommand(service, ['keys', 'create', '--name', 'jq-fails', '--jq', '-(.x)']);
    expect(result.code).toBe(1);
    const printed = JSON.parse(result.stdout);
    expect(printed.key).toMatch(/^fcs_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}$/);
    expect(printed.name).toBe('jq-fails');
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('jq_error');
    expect(error.hint).toBe(
      'the key was created: its whole answer is printed instead, as its secret is shown only now',
    );
    expect(result.stderr).not.toContain(printed.key.slice(13));
    // A filter whose error quotes the secret cut or changed (a breaker's find): jq's message is not shown.
    for (const filter of ['.key[13:] | error', '.key | split("_") | error', '.key | ascii_upcase | error']) {
      const quoted = await runCommand(service, ['keys', 'create', '--name', 'jq-quotes', '--jq', filter]);
      expect(quoted.code).toBe(1);
      const secret = (JSON.parse(quoted.stdout) as { key: string }).key.slice(13);
      expect(JSON.parse(quoted.stderr).error.message).toBe(
        "--jq: the filter failed (jq's message is not shown: the answer holds a key it may quote)",
      );
      expect(quoted.stderr.toLowerCase()).not.toContain(secret.slice(0, 8).toLowerCase());
    }
    // The key printed works.
    expectContract('getCurrentApiKey', await call(service, 'getCurrentApiKey', { key: printed.key }), 200);
  });

  it('--save with a config file that cannot be read or written: refused (exit 2) before any key is made', async () => {
    const dir = makeConfigDir();
    writeFileSync(join(dir, 'config.json'), '{"profiles": {broken', { mode: 0o600 });
    const before = service.stats.byRoute.createApiKey ?? 0;
    const result = await runCli(['keys', 'create', '--save', '--jq', '.key_prefix'], {
      env: { FACECTL_CONFIG_DIR: dir, FACECTL_API_KEY: service.key('pro'), FACECTL_BASE_URL: service.baseUrl },
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr).error.code).toBe('config_invalid');
    expect(service.stats.byRoute.createApiKey ?? 0).toBe(before);
    // One that cannot be written (its directory under a dangling symlink): refused before too, naming the link.
    const link = join(makeConfigDir(), 'link');
    symlinkSync('/nonexistent/facectl-dir', link);
    const unwritable = await runCli(['keys', 'create', '--save', '--jq', '.key_prefix'], {
      env: {
        FACECTL_CONFIG_DIR: join(link, 'facectl'),
        FACECTL_API_KEY: service.key('pro'),
        FACECTL_BASE_URL: service.baseUrl,
      },
    });
    expect(unwritable.code).toBe(2);
    expect(unwritable.stdout).toBe('');
    const { error } = JSON.parse(unwritable.stderr);
    expect(error.code).toBe('config_write_failed');
    expect(error.message).toContain(`is under ${link}, a symlink to /nonexistent/facectl-dir, which does not exist`);
    expect(service.stats.byRoute.createApiKey ?? 0).toBe(before);
  });

  it('on a terminal warns on stderr that the key will not be shown again', async () => {
    const tc = contextFor(service, { stdoutIsTTY: true, stdinIsTTY: true });
    const key = await runCreateKey(tc.ctx, { name: 'tty', save: false, yes: false });
    await tc.close();
    expect(tc.stdout()).toContain(key.key);
    expect(tc.stderr()).toMatch(/Save this key now: .*will not show it again/);
    expect(tc.stderr()).not.toContain(key.key);
  });

  it('on a terminal with --save: no "save this key now" beside "Saved key"', async () => {
    const tc = contextFor(service, { stdoutIsTTY: true, stdinIsTTY: true });
    const key = await runCreateKey(tc.ctx, { name: 'tty-saved', save: true, yes: true });
    await tc.close();
    expect(tc.stderr()).toContain(`Saved key ${key.key_prefix}… in profile "default" (${tc.config.path}).\n`);
    expect(tc.stderr()).not.toMatch(/save this key now/i);
  });

  it('--save stores the new key in the active profile', async () => {
    const tc = contextFor(service);
    const key = await runCreateKey(tc.ctx, { name: 'saved', save: true, yes: true });
    await tc.close();
    expect(tc.config.data.profiles?.default?.api_key).toBe(key.key);
    expect(tc.stderr()).toContain(`Saved key ${key.key_prefix}… in profile "default"`);
    expect(tc.stderr()).not.toContain(key.key);
    expect(tc.stderr()).not.toContain('FACECTL_API_KEY');
  });

  it('--save while FACECTL_API_KEY is set: saved, with the warning that the variable takes precedence', async () => {
    const result = await runCommand(service, ['keys', 'create', '--name', 'ro', '--save', '--profile', 'ro'], {
      env: { FACECTL_API_KEY: service.key('standard') },
    });
    expect(result.code, result.stderr).toBe(0);
    const saved = result.tc.config.data.profiles?.ro?.api_key;
    expect(saved).toMatch(/^fcs_/);
    expect(result.stderr).toContain(`Saved key ${saved?.slice(0, 12)}… in profile "ro"`);
    expect(result.stderr).toContain(
      'warning: FACECTL_API_KEY is set to another key, which is used instead of the stored one (`unset FACECTL_API_KEY` to use it)\n',
    );
  });

  it("--save --profile EXISTING makes the key with that profile's key, as its --help says (NEW: the one used without)", async () => {
    const narrow = expectContract(
      'createApiKey',
      await call(service, 'createApiKey', { key: service.key('pro'), body: { name: 'narrow', scopes: ['v1:keys'] } }),
      201,
    );
    const narrowProfile = { api_key: narrow.key, base_url: service.baseUrl, api_key_base_url: service.baseUrl };
    const result = await runCommand(service, argv`keys create --save --yes --profile narrow --json`, {
      config: { profiles: { narrow: narrowProfile } },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).scopes).toEqual(['v1:keys']);
    const help = await runCommand(service, argv`keys create --help`);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      "It is made with that profile's key; --profile NEW creates NEW and makes it with the key used without --profile",
    );
  });

  it('Ctrl-C before the request is sent -> CancelError at once, no key made', async () => {
    const tc = contextFor(service);
    const before = requestCount(service);
    const stored = JSON.stringify(tc.config.data);
    tc.interrupt();
    await expect(runCreateKey(tc.ctx, { name: 'early', save: true, yes: true })).rejects.toBeInstanceOf(CancelError);
    await tc.close();
    expect(requestCount(service)).toBe(before);
    expect(tc.stdout()).toBe('');
    expect(JSON.stringify(tc.config.data)).toBe(stored);
  });

  it('a wider key than the creating one is refused by the service: exit 6 with the fix', async () => {
    const narrow = contextFor(service);
    const child = await runCreateKey(narrow.ctx, { scopes: ['v1:keys'], budgetUsd: 1, save: false, yes: false });
    await narrow.close();
    const result = await runCommand(service, ['keys', 'create', '--scopes', 'v1:*'], {
      apiKey: child.key,
    });
    expect(result.code).toBe(6);
    expect(result.stderr).toContain('key_escalation');
    expect(result.stdout).toBe('');
  });
});

describe('keys create: flags are checked before anything is sent', () => {
  const refused = async (argv: string[], flag: string, rule: RegExp) => {
    const before = requestCount(service);
    const result = await runCommand(service, ['keys', 'create', ...argv]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`error: ${flag}: `);
    expect(result.stderr).toMatch(rule);
    expect(result.stdout).toBe('');
    expect(requestCount(service)).toBe(before);
  };

  it.each(['1.5', 'abc', ''])(
    '--expires-in-days %j (not an integer, as the seed types it) -> exit 2',
    async (value) => {
      await refused([`--expires-in-days=${value}`], '--expires-in-days', /must be a whole number of days/);
    },
  );

  it.each(['admin', 'v2:*', 'v1:', ','])('--scopes %j (not of the seed form v1:*) -> exit 2', async (value) => {
    await refused(['--scopes', value], '--scopes', /the form v1:\*|at least one/);
  });

  // Bounds and grammar the local service chose: sent unchanged, refused by `facectl serve` with 422.
  it.each([
    ['--expires-in-days=0', 'expires_in_days: must be between 1 and 365 days'],
    ['--expires-in-days=1000000', 'expires_in_days: must be between 1 and 365 days'],
    ['--scopes=v1:billing', 'must be v1:*, v1:<area> or v1:<area>:<read|write>'],
    ['--scopes=v1:faces:delete', 'must be v1:*, v1:<area> or v1:<area>:<read|write>'],
  ])('%s is sent; the local service refuses it with 422 naming the field', async (flag, message) => {
    const before = requestCount(service);
    const result = await runCommand(service, ['keys', 'create', flag]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('status: 422 validation_error');
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
    expect(requestCount(service)).toBe(before + 1);
  });

  it.each([
    ['-5', /0 or more/],
    ['NaN', /amount of US dollars/],
    ['1e309', /finite/],
    ['five', /amount of US dollars/],
  ])('--budget-usd %j -> exit 2', async (value, rule) => {
    await refused([`--budget-usd=${value}`], '--budget-usd', rule);
  });

  it('an unknown flag is a usage error naming it', async () => {
    const before = requestCount(service);
    const result = await runCommand(service, ['keys', 'create', '--expires', '3']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown option '--expires'");
    expect(requestCount(service)).toBe(before);
  });

  it('parses good values into typed options', () => {
    const parseCreateKeyOptions = (raw: Record<string, unknown>) => checkFlags(createKey.flags ?? {}, raw);
    expect(
      parseCreateKeyOptions({
        name: 'x',
        expiresInDays: '365',
        scopes: 'v1:*, v1:oauth:write',
        budgetUsd: '0',
        allowedFaceIds: 'a,,b',
        save: true,
      }),
    ).toEqual({
      name: 'x',
      expiresInDays: 365,
      scopes: ['v1:*', 'v1:oauth:write'],
      budgetUsd: 0,
      allowedFaceIds: ['a', 'b'],
      allowedLlmModels: undefined,
      save: true,
      yes: false,
    });
    expect(() => parseCreateKeyOptions({ budgetUsd: 'Infinity' })).toThrow(UsageError);
  });
});

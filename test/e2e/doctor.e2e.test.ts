import { chmodSync, chownSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/serve-process.js';
import { createKey, useService } from '../helpers/service-suite.js';
import { runCli } from '../helpers/run-cli.js';
import { unprivilegedCli } from '../helpers/world-readable-cli.js';

/** `facectl doctor` as a script runs it: the built bin, a key from the environment, --json. */

const service = useService();
beforeAll(() => ensureBuilt(), 120_000);

describe('facectl doctor (built bin)', () => {
  it('prints one JSON document of checks and exits 0 with a working key, 1 without one', async () => {
    const key = service.key('connect');
    const good = await runCli(['doctor', '--json'], {
      env: { FACECTL_API_KEY: key, FACECTL_BASE_URL: service.baseUrl },
    });
    expect(good.code, good.stderr).toBe(0);
    const { checks } = JSON.parse(good.stdout);
    expect(checks.filter((c: { status: string }) => c.status !== 'ok')).toEqual([]);
    expect(checks.find((c: { name: string }) => c.name === 'key works').detail).toContain('plan connect');
    expect(good.stdout + good.stderr).not.toContain(key);

    const none = await runCli(['doctor', '--base-url', service.baseUrl]);
    expect(none.code).toBe(1);
    // The fix names the --base-url given, so the key is checked where this run looked.
    expect(none.stdout).toMatch(
      /^fail\tkey source\t.*\trun `facectl auth login --base-url http:\/\/127\.0\.0\.1:\d+`/m,
    );
    expect(none.stderr).toContain('error: 1 of 9 checks failed: key source');
  });

  // A breaker's find: doctor (and config list) said "check the permissions of …/config.json", a file that
  // is not there, for a per-user config directory of mode 000.
  it('a config directory of mode 000 (run as an unprivileged user): doctor names the directory and its fix, as config list does', async () => {
    // As root every directory is open, so the bin runs as "nobody" there, from a copy that user can read.
    const cli = await unprivilegedCli();
    const home = join(cli.dir, 'home-000');
    const dir = join(home, '.config', 'facectl');
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    if (cli.asRoot) for (const path of [home, join(home, '.config'), dir]) chownSync(path, 65534, 65534);
    chmodSync(dir, 0o000);
    // The key and URL from the environment: only the configuration check is about the directory.
    const run = (args: string[], env: Record<string, string | undefined> = {}) =>
      cli.run(args, { HOME: home, FACECTL_API_KEY: service.key('pro'), FACECTL_BASE_URL: service.baseUrl, ...env });
    try {
      const detail = `cannot open the configuration directory ${dir} (EACCES)`;
      const fix = `check the permissions of ${dir} (\`chmod 700 ${dir}\` if it is yours), or set FACECTL_CONFIG_DIR to another directory`;
      const doctor = await run(['doctor', '--json']);
      expect(doctor.code, doctor.stderr).toBe(1);
      const { checks } = JSON.parse(doctor.stdout);
      expect(checks.find((c: { name: string }) => c.name === 'config file')).toEqual({
        name: 'config file',
        status: 'fail',
        detail,
        fix,
      });
      expect(JSON.parse(doctor.stderr).error.message).toBe('1 of 9 checks failed: config file');
      // With no key: not `facectl auth login`, which cannot read (nor write) the file either, but the failed row.
      const keyless = await run(['doctor', '--json'], { FACECTL_API_KEY: undefined });
      expect(keyless.code, keyless.stderr).toBe(1);
      expect(JSON.parse(keyless.stdout).checks.find((c: { name: string }) => c.name === 'key works')).toEqual({
        name: 'key works',
        status: 'warn',
        detail: 'not checked: no API key for this base URL',
        fix: 'see "config file"',
      });
      expect(JSON.parse(keyless.stderr).error.message).toBe('2 of 9 checks failed: config file, key source');

      const list = await run(['config', 'list']);
      expect(list.code).toBe(2);
      expect(list.stdout).toBe('');
      expect(list.stderr).toBe(`error: ${detail}\n${fix}\n`);
    } finally {
      chmodSync(dir, 0o700);
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  /** `facectl doctor` with `key` in FACECTL_API_KEY: its "key works" row, which is a warning (exit 0). */
  async function keyWorksWarning(key: string) {
    const result = await runCli(['doctor'], { env: { FACECTL_API_KEY: key, FACECTL_BASE_URL: service.baseUrl } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).not.toContain(key);
    const row = result.stdout.split('\n').find((line) => line.startsWith('warn\tkey works\t')) ?? '';
    const [, , detail, fix] = row.split('\t');
    return { detail, fix };
  }

  it('a key whose budget is used up: the fix is words, not `keys create` with that key (its keys spend out of its budget)', async () => {
    const spent = await createKey(service, service.key('pro'), { budget_usd: 0 });
    const { detail, fix } = await keyWorksWarning(spent.key);
    expect(detail).toMatch(/^budget used up: /);
    expect(fix).toBe(
      'set FACECTL_API_KEY to a new key, made with a key that has budget left ' +
        '(a key made with this one spends out of its budget, which is used up)',
    );
  });

  it('a key expiring soon: the fix is words, not `keys create` with that key (its keys expire with it)', async () => {
    const soon = await createKey(service, service.key('pro'), { expires_in_days: 1 });
    const { detail, fix } = await keyWorksWarning(soon.key);
    expect(detail).toMatch(/^expires in 1 day: /);
    expect(fix).toBe(
      'set FACECTL_API_KEY to a new key, made with a longer-lived key than this one ' +
        '(a key expires no later than the key that makes it)',
    );
  });
});

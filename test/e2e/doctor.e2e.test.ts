import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/serve-process.js';
import { createKey, useService } from '../helpers/service-suite.js';
import { runCli } from '../helpers/run-cli.js';

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
    expect(none.stdout).toMatch(/^fail\tkey source\t.*\trun `facectl auth login`/m);
    expect(none.stderr).toContain('error: 1 of 8 checks failed: key source');
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

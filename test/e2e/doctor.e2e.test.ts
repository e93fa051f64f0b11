import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
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
});

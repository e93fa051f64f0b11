import { beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/fault-server.js';
import { useFaultServer } from '../helpers/hooks.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { runCli } from '../helpers/run-cli.js';
import { batchEnv, batchFile, resultLines, storedLabels } from './support.js';

// A batch against a service that rate-limits its key (`facectl serve --rate-limit N`: 429 with
// Retry-After past N requests a second): the workers share one pause, so every line waits its turn
// and is created exactly once instead of failing after its own retries ran out.

const RATE = 2;
const service = useService({ rateLimit: RATE }, { each: true, faces: ['ada-rate'] });
const limited = useFaultServer();
beforeAll(() => ensureBuilt(), 120_000);

describe('a batch under the service rate limit', () => {
  it(`30 lines at --concurrency 4 against --rate-limit ${RATE}: exit 0, every line created exactly once`, async () => {
    const { file, lines } = batchFile('ada-rate', 'rate-', 30);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const res = await runCli(['docs', 'submit', '--file', file, '--concurrency', '4', '--json'], {
      env,
      timeoutMs: 60_000,
    });
    expect(res.code, res.stderr).toBe(0);
    // The limit was reached: more requests than lines (the refused ones sent again), and no line failed for it.
    expect(service.stats.byRoute.createDocument).toBeGreaterThan(30);
    const results = resultLines(res.stdout);
    expect(results.map((r) => r.line).sort((a, b) => a - b)).toEqual(lines.map((_, i) => i + 1));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(res.stderr).toContain('Submitted 30 of 30 documents.');
    expect(res.stderr).not.toMatch(/rate limited|failed/);
    expect(storedLabels(service, 'rate-')).toEqual(lines.map((l) => (JSON.parse(l) as { label: string }).label).sort());
  }, 90_000);

  it('a service that never lets a request through: the batch gives up after 3 shared pauses (exit 7), none created', async () => {
    limited.handle((_req, res) => json(res, 429, { detail: 'slow down' }, { 'Retry-After': '1' }));
    const { file } = batchFile('ada-rate', 'never-', 10);
    const before = limited.requests.length;
    const res = await runCli(['docs', 'submit', '--file', file, '--concurrency', '4', '--json'], {
      env: batchEnv('fcs_abcdefgh_0123456789abcdefABCDEFGHIJ0123', limited.baseUrl),
    });
    expect(res.code, res.stderr).toBe(7);
    // At most four waves of the four workers: the first, then one after each of the three pauses.
    expect(limited.requests.length - before).toBeLessThanOrEqual(16);
    expect(limited.requests.length - before).toBeGreaterThan(4);
    const error = (JSON.parse(res.stderr) as { error: { code: string; message: string; hint: string } }).error;
    expect(error.code).toBe('batch_failed');
    expect(error.message).toMatch(/failed \(line \d+: rate limited by the service \(429\): slow down\)/);
    expect(res.stdout).not.toContain('"ok":true');
  });

  it('a Retry-After longer than the client waits: each worker gives up at once (exit 7), saying when to retry', async () => {
    limited.handle((_req, res) => json(res, 429, { detail: 'over quota' }, { 'Retry-After': '120' }));
    const { file } = batchFile('ada-rate', 'long-', 10);
    const before = limited.requests.length;
    const res = await runCli(['docs', 'submit', '--file', file, '--concurrency', '4'], {
      env: batchEnv('fcs_abcdefgh_0123456789abcdefABCDEFGHIJ0123', limited.baseUrl),
    });
    expect(res.code, res.stderr).toBe(7);
    expect(limited.requests.length - before).toBeLessThanOrEqual(4);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/line \d+: rate limited by the service \(429\): over quota/);
  });
});

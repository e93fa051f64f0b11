import { beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/fault-server.js';
import { useFaultServer } from '../helpers/hooks.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { runCli } from '../helpers/run-cli.js';
import { slowProxy } from '../helpers/slow-proxy.js';
import { batchEnv, batchFile, journalFiles, start, storedLabels, until } from './support.js';

// A batch stopped by Ctrl-Z or SIGSTOP keeps its lock no fresher: after 10 s a --resume takes the batch
// over and finishes it. The stopped run, continued, must say that another run took its batch over, not
// that its record was removed and a later run sends every line again (a breaker's find).

const server = useFaultServer();
const limited = useFaultServer();
const service = useService({}, { faces: ['ada-suspended'] });
beforeAll(() => ensureBuilt(), 120_000);

describe('a batch suspended past its lock’s age', () => {
  it('SIGSTOP, --resume finishes it, SIGCONT: the first run says it was taken over (exit 5), one document a line', async () => {
    const prefix = 'suspended-';
    const { file, lines } = batchFile('ada-suspended', prefix, 30);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 0);
    proxy.holdAfter(5);
    const run = start(['docs', 'submit', '--file', file, '--concurrency', '2'], env);
    let resumed;
    try {
      await until(() => storedLabels(service, prefix).length >= 6, 'answers held after the fifth');
      run.child.kill('SIGSTOP');
      // The lock is 10 s old once no heartbeat touches it: then it is taken over.
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      resumed = await runCli(['docs', 'submit', '--file', file, '--resume'], {
        env: { ...env, FACECTL_BASE_URL: service.baseUrl },
      });
    } finally {
      run.child.kill('SIGCONT');
      proxy.release();
    }
    expect(resumed.code, resumed.stderr).toBe(0);
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(5);
    expect(run.stderr()).toMatch(/taken over by another process while this one was stopped for \d+ s/);
    expect(run.stderr()).toContain('Once the run that took the batch over has ended, then run `facectl docs submit');
    expect(run.stderr()).not.toContain('removed');
    expect(run.stderr()).not.toContain('sends every line again');
    expect(storedLabels(service, prefix)).toEqual(lines.map((l) => (JSON.parse(l) as { label: string }).label).sort());
    // Finished by the --resume: a plain run would be a new batch, and no unfinished record is left.
    expect(journalFiles(env.FACECTL_CONFIG_DIR)).toEqual([]);
  }, 60_000);

  it('SIGSTOP while waiting out a rate limit, --restart takes it over, SIGCONT: not one more attempt (exit 5)', async () => {
    // A breaker's find: the continued run sent its retries after the pause, under the keys of a batch another run
    // had taken over and made again: 4 documents more than --restart had said.
    limited.handle((_req, res) => json(res, 429, { detail: 'slow down' }, { 'Retry-After': '5' }));
    const prefix = 'paused-';
    const { file, lines } = batchFile('ada-suspended', prefix, 6);
    const env = batchEnv(service.key('pro'), limited.baseUrl);
    const before = limited.requests.length;
    const run = start(['docs', 'submit', '--file', file, '--concurrency', '2'], env);
    let restarted;
    let attempts = 0;
    try {
      await until(() => limited.requests.length - before >= 2, 'the first two requests refused (429)');
      run.child.kill('SIGSTOP');
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      restarted = await runCli(['docs', 'submit', '--file', file, '--restart'], {
        env: { ...env, FACECTL_BASE_URL: service.baseUrl },
      });
      attempts = limited.requests.length;
    } finally {
      run.child.kill('SIGCONT');
    }
    expect(restarted.code, restarted.stderr).toBe(0);
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(5);
    expect(run.stderr()).toMatch(/taken over by another process while this one was stopped for \d+ s/);
    expect(limited.requests.length, 'attempts of the continued run').toBe(attempts);
    expect(storedLabels(service, prefix)).toEqual(lines.map((l) => (JSON.parse(l) as { label: string }).label).sort());
  }, 60_000);
});

import { beforeAll, describe, expect, it } from 'vitest';
import { useFaultServer } from '../helpers/hooks.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { runCli } from '../helpers/run-cli.js';
import { slowProxy } from '../helpers/slow-proxy.js';
import { batchEnv, batchFile, journalFiles, start, storedLabels, until } from './support.js';

// A batch stopped by Ctrl-Z or SIGSTOP holds its batch however long it is stopped: another run of the same
// file is refused (exit 5), saying how to continue or end it, and the stopped run, continued, finishes it.
// (A breaker's find: after 10 s its lock was taken over by age; continued, it sent its retries under a
// batch another run had made again, and said its record had been removed.)

const server = useFaultServer();
const service = useService({}, { faces: ['ada-suspended'] });
beforeAll(() => ensureBuilt(), 120_000);

describe('a batch stopped (SIGSTOP) past its lock’s age', () => {
  it('--resume and --restart meanwhile: exit 5 naming the stopped pid, nothing sent; continued, it finishes', async () => {
    const prefix = 'suspended-';
    const { file, lines } = batchFile('ada-suspended', prefix, 30);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 0);
    proxy.holdAfter(5);
    const run = start(['docs', 'submit', '--file', file, '--concurrency', '2'], env);
    const pid = run.child.pid as number;
    try {
      await until(() => storedLabels(service, prefix).length >= 6, 'answers held after the fifth');
      run.child.kill('SIGSTOP');
      // Untouched for longer than the 10 s after which a killed run's lock is taken over.
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      const before = service.stats.requests;
      for (const mode of ['--resume', '--restart']) {
        const other = await runCli(['docs', 'submit', '--file', file, mode], {
          env: { ...env, FACECTL_BASE_URL: service.baseUrl },
        });
        expect(other.code, other.stderr).toBe(5);
        expect(other.stderr).toContain(`error: another facectl (pid ${pid}, stopped) is submitting ${file}`);
        expect(other.stderr).toContain(
          `that run is stopped (Ctrl-Z, or SIGSTOP) and holds its batch until it ends: let it go on (\`fg\` where it runs, or kill -CONT ${pid}) or end it (kill ${pid}; kill -CONT ${pid})`,
        );
      }
      expect(service.stats.requests).toBe(before);
    } finally {
      run.child.kill('SIGCONT');
      proxy.release();
    }
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(0);
    expect(run.stderr()).toContain('Submitted 30 of 30 documents.');
    expect(storedLabels(service, prefix)).toEqual(lines.map((l) => (JSON.parse(l) as { label: string }).label).sort());
    expect(journalFiles(env.FACECTL_CONFIG_DIR)).toEqual([]);
  }, 60_000);
});

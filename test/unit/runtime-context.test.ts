import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/context.js';
import { run } from '../../src/main.js';
import { contextFor } from '../helpers/command-harness.js';
import { createFace, startTestService } from '../helpers/service.js';
import { makeTempDir } from '../helpers/temp.js';

// Issue 14: commands take the working directory from the context (ctx.runtime), not from process.cwd().
describe('ctx.runtime', () => {
  it('a batch read from standard input is resumed only in the directory it was read in', async () => {
    const service = await startTestService();
    await createFace(service, service.key('pro'), 'ada-lovelace', { name: 'Ada Lovelace' });
    try {
      const stateDir = makeTempDir('facectl-runtime-');
      const lines = ['ada-lovelace', 'nobody-here', 'ada-lovelace'].map((alias, i) =>
        JSON.stringify({ alias, label: `l${i}`, content: 'x' }),
      );
      const submit = async (cwd: string, extra: string[]) => {
        const tc = contextFor(service, { stdin: `${lines.join('\n')}\n`, env: { FACECTL_STATE_DIR: stateDir } });
        const runtime: Runtime = { ...tc.ctx.runtime, cwd: () => cwd };
        try {
          const code = await run(['docs', 'submit', '-', '--no-input', '--concurrency', '1', ...extra], {
            ...tc.ctx,
            runtime,
          });
          return { code, stderr: tc.stderr() };
        } finally {
          await tc.close();
        }
      };
      const stopped = await submit('/work/a', []);
      expect(stopped.code).not.toBe(0);
      // Where to run it: a batch of standard input is known by the directory it is read in.
      expect(stopped.stderr).toContain('--resume --concurrency 1` in /work/a to send the rest');

      const elsewhere = await submit('/work/b', ['--resume']);
      expect(elsewhere.code).toBe(2);
      // Named: the batch of this input read elsewhere, and where to resume it.
      expect(elsewhere.stderr).toContain(
        'error: nothing to resume: no unfinished batch of standard input was recorded, but 1 of its first 3 lines was ' +
          'submitted by the unfinished batch of standard input read in /work/a\n',
      );
      expect(elsewhere.stderr).toContain(
        `feed it its own input with --resume there (the record is ${stateDir}/batches/`,
      );

      const here = await submit('/work/a', ['--resume']);
      expect(here.stderr).not.toContain('nothing to resume');
      expect(here.stderr).toContain('1 of them by an earlier run, not sent again');
    } finally {
      await service.close();
    }
  });
});

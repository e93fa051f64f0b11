import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/run-cli.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { runCli } from '../helpers/run-cli.js';
import { batchEnv, batchFile, storedLabels } from './support.js';

// A batch whose journal can no longer be written (a full disk; here the process's file size limit, as
// `ulimit -f` sets it, with SIGXFSZ ignored so the write fails with EFBIG) stops sending: a line sent
// then could not be recorded as acknowledged. Before, it sent every line and failed only at the end.

const service = useService({}, { faces: ['ada-full'] });
beforeAll(() => ensureBuilt(), 120_000);

/** `docs submit` with a file size limit of `blocks` 512-byte blocks (stdout to /dev/null: no limit there). */
function limited(args: string[], env: Record<string, string>, blocks: number) {
  const command = `trap '' XFSZ; ulimit -f ${blocks}; exec "$0" "$@" > /dev/null`;
  const child = spawn('sh', ['-c', command, process.execPath, BIN, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      NO_COLOR: '1',
      // Where runCli keeps it too, for the --resume below.
      FACECTL_STATE_DIR: join(env.FACECTL_CONFIG_DIR as string, 'state'),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr })),
  );
}

describe('a batch whose journal cannot be written', () => {
  it('stops sending, exit 1 naming the journal; --resume with room again sends the rest, each line once', async () => {
    const total = 3000;
    const { file } = batchFile('ada-full', 'full-', total);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    // 4 blocks: the journal's header and a few dozen records fit, then writes fail.
    const cut = await limited(['docs', 'submit', '--file', file, '--json'], env, 4);
    expect(cut.code, cut.stderr).toBe(1);
    const error = JSON.parse(cut.stderr.trim().split('\n').at(-1) as string).error;
    expect(error.code).toBe('state_unwritable');
    expect(error.message).toMatch(/^cannot write the batch record .*: EFBIG$/);
    const sent = storedLabels(service, 'full-');
    expect(new Set(sent).size).toBe(sent.length);
    expect(sent.length).toBeLessThan(total);

    const resumed = await runCli(['docs', 'submit', '--file', file, '--json', '--resume'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    const all = storedLabels(service, 'full-');
    expect(all).toHaveLength(total);
    expect(new Set(all).size).toBe(total);
  }, 120_000);
});

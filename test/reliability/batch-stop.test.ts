import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useFaultServer } from '../helpers/hooks.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { BIN, ROOT, runCli } from '../helpers/run-cli.js';
import { type SlowProxy, slowProxy } from '../helpers/slow-proxy.js';
import { type Watched, watchChild } from '../helpers/watch-child.js';
import { batchEnv, batchFile, journalFiles, stored, until } from './support.js';

// Case 53 of docs/reliability.md: a batch stopped by a closed output pipe, SIGTERM (`timeout`, a CI
// cancel) or Ctrl-C on a terminal -> lock released, journal kept, the "interrupted: N of M" line and
// the exact `--resume` command, non-zero exit (141, 143, 130). The command printed is then run as it
// is: it sends the rest, and no line is created twice.

const LINES = 20;

const server = useFaultServer();
const service = useService({}, { faces: ['ada-stop'] });
beforeAll(() => ensureBuilt(), 120_000);

interface Stopped {
  code: number | null;
  /** stderr (for the terminal, everything the terminal showed). */
  said: string;
}

interface Setup {
  batch: string;
  prefix: string;
  configDir: string;
  env: Record<string, string>;
  /** Between the bin (at server) and the service: three answers pass, then it holds them back. */
  proxy: SlowProxy;
}

function setup(name: string): Setup {
  const prefix = `stop-${name}-`;
  const { file: batch } = batchFile('ada-stop', prefix, LINES, (i) => `${name} ${i} ✓`);
  const env = batchEnv(service.key('pro'), server.baseUrl);
  const configDir = env.FACECTL_CONFIG_DIR;
  const proxy = slowProxy(server, service.baseUrl, 0);
  proxy.holdAfter(3);
  return {
    batch,
    prefix,
    configDir,
    env: {
      ...env,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: configDir,
      NO_COLOR: '1',
      TERM: 'xterm',
      FACECTL_STATE_DIR: join(configDir, 'state'),
    },
    proxy,
  };
}

/** After the stop: what every case must show, then the printed command run as printed. */
async function checkStopped(s: Setup, stopped: Stopped, exitCode: number): Promise<void> {
  expect(stopped.code, stopped.said).toBe(exitCode);
  // A closed output is said as such, not as an interruption (a newcomer took it for a Ctrl-C).
  const why = exitCode === 141 ? 'stopped: standard output was closed' : 'interrupted';
  const done = Number(new RegExp(`${why}: (\\d+) of ${LINES} documents were submitted`).exec(stopped.said)?.[1]);
  expect(done, stopped.said).toBeGreaterThanOrEqual(2);
  expect(done).toBeLessThan(LINES);
  const command = /`(facectl docs submit [^`]*--resume[^`]*)`/.exec(stopped.said)?.[1];
  expect(command, stopped.said).toBe(`facectl docs submit --file ${s.batch} --resume --concurrency 2 --json`);
  // The lock is released, the journal kept.
  const dir = join(s.configDir, 'state', 'batches');
  expect(readdirSync(dir).filter((name) => name.endsWith('.lock'))).toEqual([]);
  expect(journalFiles(s.configDir)).toHaveLength(1);

  // The printed command, run word for word, sends the rest; nothing is created twice.
  s.proxy.release();
  const words = (command as string).split(' ').slice(1);
  const resumed = await runCli(words, { env: { ...s.env, FACECTL_BASE_URL: service.baseUrl } });
  expect(resumed.code, resumed.stderr).toBe(0);
  const labels = stored(service, s.prefix).map((d) => d.label);
  expect(labels.sort()).toEqual(Array.from({ length: LINES }, (_, i) => `${s.prefix}${i}`).sort());
  // No journal and no lock left: only the finished batch's record, for a later --resume to find.
  expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([
    expect.stringMatching(/^[0-9a-f]{24}\.[\w-]{16}\.finished$/),
  ]);
}

/**
 * The batch started, as a pipe would run it or (`tty`) through a pseudo-terminal (script), where Ctrl-C
 * is the byte 0x03 typed into it, turned into SIGINT by the terminal.
 */
function startBatch(s: Setup, tty = false): { child: ChildProcessWithoutNullStreams; run: Watched } {
  const args = [BIN, 'docs', 'submit', '--file', s.batch, '--concurrency', '2', '--json'];
  const child = tty
    ? spawn('script', ['-qefc', `${process.execPath} ${args.join(' ')}`, '/dev/null'], { cwd: ROOT, env: s.env })
    : spawn(process.execPath, args, { cwd: ROOT, env: s.env });
  return { child, run: watchChild(child, 30_000) };
}

describe('case 53: a batch stopped short says how far it got and how to go on', () => {
  it('output pipe closed by its reader (`| head`): exit 141, the stopped line and the --resume command', async () => {
    const s = setup('pipe');
    const { child, run } = startBatch(s);
    // Results are on stdout; the reader then goes away, and one more answer is let through, whose
    // result line meets the closed pipe.
    await until(() => run.stdout().includes('\n'), 'the first result line');
    child.stdout.destroy();
    s.proxy.holdAfter(4);
    const { code } = await run.exit;
    await checkStopped(s, { code, said: run.stderr() }, 141);
  });

  it.each([
    {
      how: 'SIGTERM (`timeout`, a CI cancel)',
      exitCode: 143,
      tty: false,
      stop: (child: ChildProcessWithoutNullStreams) => child.kill('SIGTERM'),
    },
    {
      how: 'Ctrl-C on a terminal',
      exitCode: 130,
      tty: true,
      stop: (child: ChildProcessWithoutNullStreams) => child.stdin.write('\x03'),
    },
  ])('$how: exit $exitCode, the interrupted line and the --resume command', async ({ exitCode, tty, stop }) => {
    const s = setup(tty ? 'tty' : 'term');
    const { child, run } = startBatch(s, tty);
    // Three answered, and more applied by the service with their answers held back.
    await until(() => s.proxy.answered() >= 3 && s.proxy.held() >= 1, 'three answers and one held');
    stop(child);
    const { code } = await run.exit;
    // Through the terminal, what it showed (stdout and stderr alike) is the script's output.
    const said = tty ? run.stdout().replaceAll('\r\n', '\n') : run.stderr();
    await checkStopped(s, { code, said }, exitCode);
  });
});

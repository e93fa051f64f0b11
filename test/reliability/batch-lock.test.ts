import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ContenderResult, race, rounds } from '../helpers/concurrent.js';
import { BIN, makeConfigDir, ROOT, runCli } from '../helpers/run-cli.js';
import { useFaultServer } from '../helpers/hooks.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { type SlowProxy, slowProxy } from '../helpers/slow-proxy.js';
import { startUnreaped } from '../helpers/unreaped.js';
import { batchFile, resultLines, stored, until } from './support.js';

// Case 45 of docs/reliability.md: N `docs submit` of one file at once, with or without a stale lock
// left by kill -9 -> exactly one runs, the others exit 5; no line is created twice.

const PROCESSES = 4;
const ROUNDS = 8;
const LINES = 3;

const service = useService({}, { faces: ['ada-lock'] });
beforeAll(() => ensureBuilt(), 120_000);
const front = useFaultServer();
/** Takes requests and never answers them: the run killed there leaves its lock behind. */
const silent = useFaultServer(() => new Promise<void>(() => {}));
let proxy: SlowProxy;
beforeAll(() => {
  proxy = slowProxy(front, service.baseUrl, 0);
});

function environment(configDir: string, baseUrl: string): Record<string, string> {
  return {
    FACECTL_API_KEY: service.key('pro'),
    FACECTL_CONFIG_DIR: configDir,
    FACECTL_STATE_DIR: join(configDir, 'state'),
    FACECTL_BASE_URL: baseUrl,
    NO_COLOR: '1',
  };
}

/** What was left in the state directory: journals and locks. */
function leftovers(configDir: string): string[] {
  const dir = join(configDir, 'state', 'batches');
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** Sets the locks left in a config directory's state directory `ms` into the past. */
function ageLocks(configDir: string, ms: number): void {
  const past = new Date(Date.now() - ms);
  for (const name of leftovers(configDir).filter((n) => n.endsWith('.lock'))) {
    utimesSync(join(configDir, 'state', 'batches', name), past, past);
  }
}

/** A run of the batch killed with kill -9 while its first request is in flight: its lock stays. */
async function killedRun(file: string, configDir: string): Promise<void> {
  const seen = silent.requests.length;
  const child: ChildProcess = spawn(process.execPath, [BIN, 'docs', 'submit', '--file', file], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...environment(configDir, silent.baseUrl) },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('close', resolve));
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (silent.requests.length > seen) {
        clearInterval(check);
        resolve();
      } else if (child.exitCode !== null) {
        clearInterval(check);
        reject(new Error(`the run to be killed ended first (exit ${child.exitCode})`));
      }
    }, 5);
  });
  child.kill('SIGKILL');
  await exited;
  expect(leftovers(configDir).some((name) => name.endsWith('.lock'))).toBe(true);
}

interface Round {
  results: ContenderResult[];
  labels: string[];
}

/**
 * One round: PROCESSES runs of one file started together. The service's answers are held until every
 * run but those that got as far as sending has ended, so the one that runs still holds its lock while
 * the others try theirs (however the machine schedules them); a second run, if any, is let through too
 * and shows up as a line created twice.
 */
async function contend(tag: string, n: number, staleLock: boolean): Promise<Round> {
  const prefix = `lock-${tag}-${n}-`;
  const { file } = batchFile('ada-lock', prefix, LINES, (i) => `${prefix}${i}`);
  const labels = Array.from({ length: LINES }, (_, i) => `${prefix}${i}`);
  const configDir = makeConfigDir();
  if (staleLock) {
    await killedRun(file, configDir);
    // Stale: untouched for longer than the batch lock's 10 s (its mtime set back, as time would).
    ageLocks(configDir, 11_000);
  }

  const firstRequest = front.requests.length;
  const batchesSending = () =>
    new Set(
      front.requests
        .slice(firstRequest)
        .map((r) => /^facectl-batch-(.{16})-/.exec(String(r.headers['idempotency-key']))?.[1])
        .filter(Boolean),
    ).size;
  let ended = 0;
  proxy.holdAfter(proxy.answered());
  const check = () => {
    if (ended + batchesSending() >= PROCESSES) proxy.release();
  };
  const poll = setInterval(check, 10);
  try {
    const results = await race(
      Array.from({ length: PROCESSES }, () => ({
        command: process.execPath,
        // After a kill -9 the batch may have sent lines it has no record of: it is gone on with
        // (--resume), as a plain run would be refused (batch-killed-early.test.ts).
        args: [BIN, 'docs', 'submit', '--file', file, '--json', ...(staleLock ? ['--resume'] : [])],
        cwd: ROOT,
        env: environment(configDir, front.baseUrl),
      })),
      {
        onExit: () => {
          ended++;
          check();
        },
      },
    );
    // No journal and no lock left: only the finished batch's record (kept for --resume).
    expect(leftovers(configDir)).toEqual([expect.stringMatching(/^[0-9a-f]{24}\.[\w-]{16}\.finished$/)]);
    return { results, labels };
  } finally {
    clearInterval(poll);
    proxy.release();
  }
}

function tally(all: Round[]): { winners: number; refused: number; duplicates: number; lost: number } {
  let winners = 0;
  let refused = 0;
  let duplicates = 0;
  let lost = 0;
  for (const { results, labels } of all) {
    winners += results.filter((r) => r.code === 0).length;
    refused += results.filter((r) => r.code === 5 && /another facectl .*is submitting/.test(r.stderr)).length;
    for (const label of labels) {
      const copies = stored(service, label).filter((d) => d.label === label).length;
      if (copies > 1) duplicates += copies - 1;
      if (copies === 0) lost++;
    }
  }
  return { winners, refused, duplicates, lost };
}

describe('case 45: one batch file submitted N times at once', () => {
  for (const staleLock of [false, true]) {
    const start = staleLock ? 'a stale lock left by kill -9' : 'no lock';
    it(`from ${start}: exactly one runs, the others exit 5, no line is created twice`, async () => {
      const tag = staleLock ? 'stale' : 'free';
      const all = await rounds(ROUNDS, (n) => contend(tag, n, staleLock));
      const figures = tally(all);
      console.info(
        `case 45 (${start}): ${ROUNDS} rounds x ${PROCESSES} processes: ${figures.winners} ran, ` +
          `${figures.refused} refused (exit 5), duplicates ${figures.duplicates}, lost ${figures.lost}`,
      );
      for (const { results } of all) {
        const codes = results.map((r) => r.code).sort();
        expect(codes, results.map((r) => r.stderr).join('\n---\n')).toEqual([0, ...Array(PROCESSES - 1).fill(5)]);
      }
      expect(figures).toEqual({ winners: ROUNDS, refused: ROUNDS * (PROCESSES - 1), duplicates: 0, lost: 0 });
    }, 240_000);
  }
});

describe('a run killed with kill -9, then --resume', () => {
  /** A run that had a line applied by the service (its answers held, so it never saw them), then killed. */
  async function killed(prefix: string, unreaped: boolean) {
    const { file } = batchFile('ada-lock', prefix, LINES, (i) => `${prefix}${i}`);
    const configDir = makeConfigDir();
    const env = environment(configDir, front.baseUrl);
    proxy.holdAfter(proxy.answered());
    const command = `exec "${process.execPath}" "${BIN}" docs submit --file "${file}"`;
    const run = unreaped
      ? await startUnreaped(command, { PATH: process.env.PATH, HOME: process.env.HOME, ...env })
      : spawn('sh', ['-c', command], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
    try {
      await until(() => proxy.held() > 0, 'the killed run to have a line applied');
      if ('end' in run) await run.kill();
      else {
        const exited = new Promise((resolve) => run.once('close', resolve));
        run.kill('SIGKILL');
        await exited;
      }
    } finally {
      proxy.release();
    }
    const lock = leftovers(configDir).find((name) => name.endsWith('.lock')) as string;
    const owner = JSON.parse(readFileSync(join(configDir, 'state', 'batches', lock, 'owner.json'), 'utf8'));
    expect(owner.pid).toBe(run.pid);
    const resume = () =>
      runCli(['docs', 'submit', '--file', file, '--resume', '--json'], {
        env: environment(configDir, service.baseUrl),
      });
    const labels = Array.from({ length: LINES }, (_, i) => `${prefix}${i}`);
    const done = (result: Awaited<ReturnType<typeof resume>>) => {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).not.toContain('another facectl');
      expect(resultLines(result.stdout).map((r) => r.line)).toEqual([1, 2, 3]);
      for (const label of labels) expect(stored(service, label).map((d) => d.label)).toEqual([label]);
      expect(leftovers(configDir)).toEqual([expect.stringMatching(/^[0-9a-f]{24}\.[\w-]{16}\.finished$/)]);
    };
    return { run, configDir, file, resume, done };
  }

  it('reaped: --resume right after takes its lock over at once (its pid is gone): every line stored once', async () => {
    const { resume, done, configDir, file } = await killed('lock-killed-', false);
    // A plain run is refused, sending nothing: the batch recorded no stop of its own, so it was killed.
    const before = service.stats.requests;
    const plain = await runCli(['docs', 'submit', '--file', file], { env: environment(configDir, service.baseUrl) });
    expect(plain.code, plain.stderr).toBe(2);
    expect(plain.stderr).toContain(
      'did not stop cleanly (it was killed, crashed, or could not write its record), so it may have submitted lines',
    );
    expect(service.stats.requests).toBe(before);
    done(await resume());
  }, 60_000);

  it('not yet reaped (a zombie: its pid still answers), or its pid now another process’s: taken over at once', async () => {
    // A breaker's find: a script's --resume right after kill -9 (its shell had not reaped the run) waited 10 s.
    const { run, resume, done } = await killed('lock-zombie-', true);
    try {
      done(await resume());
    } finally {
      if ('end' in run) run.end();
    }
    // A pid reused by a later process (a restarted container): its start time is not the owner's.
    const reused = await killed('lock-reused-', false);
    const lock = leftovers(reused.configDir).find((name) => name.endsWith('.lock')) as string;
    const ownerFile = join(reused.configDir, 'state', 'batches', lock, 'owner.json');
    const owner = JSON.parse(readFileSync(ownerFile, 'utf8'));
    expect(owner.start).toMatch(/^\d+$/);
    writeFileSync(ownerFile, JSON.stringify({ ...owner, pid: process.pid }));
    reused.done(await reused.resume());
  }, 60_000);
});

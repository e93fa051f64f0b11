import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { acquireLock, LockHeldError, waitForLock } from '../../src/state/lock.js';
import { race, rounds } from '../helpers/concurrent.js';
import { makeTempDir } from '../helpers/temp.js';
import { ROOT } from '../helpers/run-cli.js';
import { startUnreaped } from '../helpers/unreaped.js';
import { until } from '../helpers/watch-child.js';

/**
 * The lock every file facectl writes is guarded by (src/state/lock.ts), tested with real processes
 * started together on one lock: whatever the start (free, held by a dead process, stale by age), no
 * two of them are ever inside at once and every one of them gets its turn.
 */

let worker: string;

beforeAll(async () => {
  const dir = makeTempDir('facectl-lock-worker-');
  const entry = join(dir, 'worker.ts');
  // Each worker takes the lock (waiting up to 20 s), logs its entry, works a little, logs its exit.
  writeFileSync(
    entry,
    `import { appendFileSync } from 'node:fs';
     import { waitForLock } from ${JSON.stringify(join(ROOT, 'src/state/lock.ts'))};
     const [lockPath, logPath, name] = process.argv.slice(2);
     const lock = await waitForLock(lockPath, { waitMs: 20_000, staleMs: 5_000 });
     appendFileSync(logPath, 'enter ' + name + '\\n');
     const until = Date.now() + 3;
     while (Date.now() < until);
     appendFileSync(logPath, 'exit ' + name + '\\n');
     lock.release();`,
  );
  worker = join(dir, 'worker.mjs');
  await build({ entryPoints: [entry], outfile: worker, bundle: true, platform: 'node', format: 'esm' });
});

/** Runs N workers at once on one lock; returns the log, checked to have no overlap. */
async function contend(lockPath: string, n: number): Promise<string[]> {
  const log = join(makeTempDir('facectl-lock-log-'), 'log');
  writeFileSync(log, '');
  const results = await race(
    Array.from({ length: n }, (_, i) => ({ command: process.execPath, args: [worker, lockPath, log, `w${i}`] })),
  );
  for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
  const lines = readFileSync(log, 'utf8').trim().split('\n');
  // Nothing twice, nothing lost: N entries and N exits, each exit right after its own entry.
  expect(lines).toHaveLength(2 * n);
  for (let i = 0; i < lines.length; i += 2) {
    expect(lines[i]).toMatch(/^enter /);
    expect(lines[i + 1]).toBe(lines[i]!.replace('enter', 'exit'));
  }
  return lines;
}

function deadPid(): number {
  return Number(
    execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }),
  );
}

describe('lock between processes', () => {
  it('six processes at once on a free lock: one at a time, all of them, over 8 rounds', async () => {
    const dir = makeTempDir('facectl-lock-');
    const figures = await rounds(8, async (round) => {
      const lockPath = join(dir, `free-${round}.lock`);
      const lines = await contend(lockPath, 6);
      expect(existsSync(lockPath)).toBe(false);
      return lines.length / 2;
    });
    expect(figures).toEqual(Array(8).fill(6));
  });

  it('a lock whose holder is gone from this host (reaped, a zombie, its pid reused) is taken over at once; one whose pid runs, once stale by age', async () => {
    const dir = makeTempDir('facectl-lock-');
    const plant = (lockPath: string, owner: object) => {
      mkdirSync(lockPath);
      writeFileSync(join(lockPath, 'owner.json'), JSON.stringify({ token: 'gone', ...owner }));
    };
    // Killed and reaped (kill -9 from a shell): its pid no longer exists here, so no wait.
    const dead = join(dir, 'dead.lock');
    plant(dead, { pid: deadPid(), host: hostname() });
    acquireLock(dead).release();
    expect(existsSync(dead)).toBe(false);
    // This very pid, which holds no such lock: an earlier run's (a container's facectl, pid 1 again after its
    // restart, with the state directory on a volume), not a run still going. Taken over at once too.
    const earlier = join(dir, 'earlier.lock');
    plant(earlier, { pid: process.pid, host: hostname() });
    acquireLock(earlier).release();
    expect(existsSync(earlier)).toBe(false);
    // Killed but not reaped (a zombie): dead, though its pid answers. Taken over at once.
    const zombie = await startUnreaped('sleep 60');
    try {
      await zombie.kill();
      const lockPath = join(dir, 'zombie.lock');
      plant(lockPath, { pid: zombie.pid, host: hostname() });
      acquireLock(lockPath, { staleMs: 5_000 }).release();
      expect(existsSync(lockPath)).toBe(false);
    } finally {
      zombie.end();
    }
    // A pid that answers: a process started since the lock was taken (its pid reused) is not its holder; one
    // whose start time is not known (a lock of an earlier version) is trusted: held, named with its pid and
    // age, until untouched for staleMs.
    const live = await startUnreaped('sleep 60');
    try {
      const reused = join(dir, 'reused.lock');
      plant(reused, { pid: live.pid, host: hostname(), start: '1' });
      acquireLock(reused, { staleMs: 5_000 }).release();
      expect(existsSync(reused)).toBe(false);
      const lockPath = join(dir, 'live.lock');
      plant(lockPath, { pid: live.pid, host: hostname() });
      const refused = (() => {
        try {
          acquireLock(lockPath, { staleMs: 5_000 });
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(refused).toBeInstanceOf(LockHeldError);
      expect((refused as LockHeldError).message).toBe(`${lockPath} is held by another process (pid ${live.pid})`);
      expect((refused as LockHeldError).holder).toBe('running');
      const past = new Date(Date.now() - 5_500);
      utimesSync(lockPath, past, past);
      // Stopped (Ctrl-Z, SIGSTOP): held however old, as it goes on once continued (a breaker's find: taken over, the
      // stopped run then sent its retries under a batch another run had made again).
      process.kill(live.pid, 'SIGSTOP');
      try {
        await until(
          () => readFileSync(`/proc/${live.pid}/stat`, 'utf8').split(') ')[1]?.startsWith('T') ?? false,
          'stopped',
        );
        expect(() => acquireLock(lockPath, { staleMs: 5_000 })).toThrow(
          expect.objectContaining({ holder: 'stopped', ownerPid: live.pid }),
        );
      } finally {
        process.kill(live.pid, 'SIGCONT');
      }
      acquireLock(lockPath, { staleMs: 5_000 }).release();
      expect(existsSync(lockPath)).toBe(false);
    } finally {
      await live.kill();
      live.end();
    }
  });

  it('a stale lock (another host, or a pid that answers) is taken over by exactly one of six processes at a time', async () => {
    const dir = makeTempDir('facectl-lock-');
    const hourAgo = new Date(Date.now() - 3_600_000);
    // Fresh from another host: held.
    const remote = join(dir, 'remote.lock');
    mkdirSync(remote);
    writeFileSync(join(remote, 'owner.json'), JSON.stringify({ token: 't', pid: 1, host: 'elsewhere' }));
    expect(() => acquireLock(remote)).toThrow(LockHeldError);
    await rounds(6, async (round) => {
      const lockPath = join(dir, `stale-${round}.lock`);
      mkdirSync(lockPath);
      writeFileSync(join(lockPath, 'owner.json'), JSON.stringify({ token: 't', pid: 1, host: 'elsewhere' }));
      utimesSync(lockPath, hourAgo, hourAgo);
      await contend(lockPath, 6);
      expect(existsSync(lockPath)).toBe(false);
      expect(existsSync(`${lockPath}.takeover`)).toBe(false);
    });
  });

  it('waiting for a held lock does not block the process: timers run while it waits', async () => {
    const dir = makeTempDir('facectl-lock-');
    const lockPath = join(dir, 'busy.lock');
    const first = acquireLock(lockPath);
    // The holder lets go from a timer: a synchronous wait would never let it run, and time out. (A count of ticks
    // of an interval beside it failed on a loaded CI machine: 3 ticks of 5 ms in 100 ms.)
    let released = false;
    setTimeout(() => {
      released = true;
      first.release();
    }, 100);
    const second = await waitForLock(lockPath, { waitMs: 5_000 });
    expect(released).toBe(true);
    second.release();
    expect(existsSync(lockPath)).toBe(false);
    await expect(
      waitForLock(lockPath, { waitMs: 0 }).then((lock) => {
        lock.release();
        return 'taken';
      }),
    ).resolves.toBe('taken');
  });

  it('a holder stalled past staleMs (its timers not run yet) learns of a takeover before it acts: verify()', () => {
    const dir = makeTempDir('facectl-lock-');
    const lockPath = join(dir, 'stalled.lock');
    const lost: string[] = [];
    const lock = acquireLock(lockPath, { staleMs: 1_000, onCompromised: (error) => lost.push(error.message) });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      lock.verify();
      expect(lost).toEqual([]);
      // Stopped for 3 s, during which another process took the lock over (and may have let it go since).
      vi.setSystemTime(Date.now() + 3_000);
      writeFileSync(join(lockPath, 'owner.json'), JSON.stringify({ token: 'other', pid: 1 }));
      lock.verify();
      expect(lost).toEqual([
        `the lock ${lockPath} was taken over by another process while this one was stopped for 3 s`,
      ]);
    } finally {
      vi.useRealTimers();
      lock.release();
    }
    expect(existsSync(lockPath)).toBe(true);
  });

  it('release removes only a lock this process still holds', () => {
    const dir = makeTempDir('facectl-lock-');
    const lockPath = join(dir, 'mine.lock');
    const first = acquireLock(lockPath);
    expect(() => acquireLock(lockPath)).toThrow(/held by another process/);
    // Someone else's lock now sits at the path (ours was taken over while we stalled).
    writeFileSync(join(lockPath, 'owner.json'), JSON.stringify({ token: 'other', pid: 1 }));
    first.release();
    expect(existsSync(lockPath)).toBe(true);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { acquireLock, LockHeldError } from '../../src/state/lock.js';
import { race, rounds } from '../helpers/concurrent.js';
import { makeTempDir } from '../helpers/temp.js';
import { ROOT } from '../helpers/run-cli.js';
import { startUnreaped } from '../helpers/unreaped.js';

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
     import { acquireLock } from ${JSON.stringify(join(ROOT, 'src/state/lock.ts'))};
     const [lockPath, logPath, name] = process.argv.slice(2);
     const lock = acquireLock(lockPath, { waitMs: 20_000, staleMs: 5_000 });
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

function bootId(): string {
  return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
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

  it('a lock left by a killed process on this machine is taken over by exactly one at a time', async () => {
    const dir = makeTempDir('facectl-lock-');
    await rounds(6, async (round) => {
      const lockPath = join(dir, `dead-${round}.lock`);
      mkdirSync(lockPath);
      writeFileSync(
        join(lockPath, 'owner.json'),
        JSON.stringify({ token: 'gone', pid: deadPid(), host: hostname(), boot: bootId() }),
      );
      await contend(lockPath, 6);
      expect(existsSync(lockPath)).toBe(false);
    });
  });

  it('a lock from another machine is taken over only once it is stale by age', async () => {
    const dir = makeTempDir('facectl-lock-');
    const lockPath = join(dir, 'remote.lock');
    mkdirSync(lockPath);
    writeFileSync(join(lockPath, 'owner.json'), JSON.stringify({ token: 't', pid: 1, host: 'elsewhere', boot: 'b' }));
    // Fresh: held, and the error names the lock.
    expect(() => acquireLock(lockPath)).toThrow(LockHeldError);
    // Untouched for an hour: stale, and six processes at once take it one at a time.
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lockPath, hourAgo, hourAgo);
    await rounds(4, async () => {
      if (!existsSync(lockPath)) {
        mkdirSync(lockPath);
        writeFileSync(
          join(lockPath, 'owner.json'),
          JSON.stringify({ token: 't', pid: 1, host: 'elsewhere', boot: 'b' }),
        );
        utimesSync(lockPath, hourAgo, hourAgo);
      }
      await contend(lockPath, 6);
    });
  });

  it('a holder killed but not reaped (a zombie), or a pid another process has now, is taken over at once; a live holder is not', async () => {
    const dir = makeTempDir('facectl-lock-');
    const owner = (pid: number, extra: object = {}) =>
      JSON.stringify({ token: 'gone', pid, host: hostname(), boot: bootId(), ...extra });
    const zombie = await startUnreaped('sleep 60');
    try {
      await zombie.kill();
      const lockPath = join(dir, 'zombie.lock');
      mkdirSync(lockPath);
      writeFileSync(join(lockPath, 'owner.json'), owner(zombie.pid));
      acquireLock(lockPath).release(); // fresh by age, yet no wait
      expect(existsSync(lockPath)).toBe(false);
    } finally {
      zombie.end();
    }
    const live = await startUnreaped('sleep 60');
    try {
      const lockPath = join(dir, 'live.lock');
      mkdirSync(lockPath);
      // The pid of a running process, recorded with another start time: a holder that died, its pid reused.
      writeFileSync(join(lockPath, 'owner.json'), owner(live.pid, { start: '1' }));
      acquireLock(lockPath).release();
      // The same running process as recorded (no start time, as older versions wrote): held.
      mkdirSync(lockPath);
      writeFileSync(join(lockPath, 'owner.json'), owner(live.pid));
      expect(() => acquireLock(lockPath)).toThrow(new RegExp(`held by another process \\(pid ${live.pid}\\)`));
    } finally {
      live.end();
    }
  });

  it('release removes only a lock this process still holds', () => {
    const dir = makeTempDir('facectl-lock-');
    const lockPath = join(dir, 'mine.lock');
    const first = acquireLock(lockPath);
    expect(() => acquireLock(lockPath)).toThrow(/held by another process/);
    // Someone else's lock now sits at the path (ours was taken over while we stalled).
    writeFileSync(join(lockPath, 'owner.json'), JSON.stringify({ token: 'other', pid: 1, host: 'x', boot: 'y' }));
    first.release();
    expect(existsSync(lockPath)).toBe(true);
  });
});

import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * A lock between processes (docs/decisions.md): a directory its holder touches every staleMs/3, taken over
 * once stale or its owner's pid here is gone, under a second lock (`<path>.takeover`) and checked again there.
 */

/** onCompromised: the lock was taken away from us (we stalled past staleMs). */
type LockOptions = { staleMs?: number; onCompromised?: (error: Error) => void };

export class LockHeldError extends Error {
  constructor(
    readonly lockPath: string,
    readonly ownerPid: number | undefined,
    readonly ageMs = 0,
    /** The holder runs on this host, so it never lets the lock go stale; or is stopped there (Ctrl-Z, SIGSTOP). */
    readonly holder: 'running' | 'stopped' | undefined = undefined,
  ) {
    super(`${lockPath} is held by another process${ownerPid ? ` (pid ${ownerPid})` : ''}`);
  }
}

export type HeldLock = Pick<Lock, 'path' | 'release' | 'verify'>;

/** `start`: the process's start time where /proc tells, so a pid reused by a later process is not taken for it. */
type OwnerRecord = { token: string; pid: number; host?: string; start?: string };

const OWNER_FILE = 'owner.json';
const held = new Set<Lock>();
// Locks still held at exit (an error path that forgot, a signal) are released.
process.once('exit', () => {
  for (const lock of [...held]) lock.release();
});

/** Takes the lock at once (a stale one, or one whose pid is gone, taken over), or throws LockHeldError. */
export function acquireLock(lockPath: string, options: LockOptions = {}): HeldLock {
  const staleMs = Math.max(options.staleMs ?? 10_000, 1_000);
  let lock = create(lockPath);
  if (!lock) {
    const seen = inspect(lockPath);
    const ageMs = seen === undefined ? 0 : Date.now() - seen.mtimeMs;
    const owner = ownerHere(lockPath, seen?.owner);
    if (seen === undefined) lock = create(lockPath);
    // A stopped holder is not taken over however old its lock: continued, it would go on where it was.
    else if ((ageMs > staleMs && owner !== 'stopped') || owner === 'gone')
      lock = takeOver(lockPath, staleMs, seen.mtimeMs);
    if (!lock)
      throw new LockHeldError(lockPath, seen?.owner?.pid, Math.max(ageMs, 0), owner === 'gone' ? undefined : owner);
  }
  lock.startHeartbeat(staleMs, options.onCompromised);
  return lock;
}

/** Takes the lock, waiting (asynchronously) up to `waitMs` while another process holds it. */
export async function waitForLock(lockPath: string, options: LockOptions & { waitMs: number }): Promise<HeldLock> {
  const deadline = Date.now() + options.waitMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      return acquireLock(lockPath, options);
    } catch (error) {
      if (!(error instanceof LockHeldError) || Date.now() >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(deadline - Date.now(), 1))));
  }
}

function create(lockPath: string): Lock | undefined {
  try {
    mkdirSync(lockPath, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  }
  const owner: OwnerRecord = {
    token: randomBytes(12).toString('hex'),
    pid: process.pid,
    host: hostname(),
    start: procStat(process.pid)?.start,
  };
  try {
    writeFileSync(join(lockPath, OWNER_FILE), JSON.stringify(owner), { mode: 0o600 });
  } catch (error) {
    rmSync(lockPath, { recursive: true, force: true });
    throw error;
  }
  return new Lock(lockPath, owner.token);
}

function inspect(lockPath: string): { mtimeMs: number; owner: OwnerRecord | undefined } | undefined {
  const stat = statSync(lockPath, { throwIfNoEntry: false });
  return stat && { mtimeMs: stat.mtimeMs, owner: readOwner(lockPath) };
}

/** Undefined when someone else got there first or is taking it over right now. */
function takeOver(lockPath: string, staleMs: number, seenMtimeMs: number): Lock | undefined {
  const guardPath = `${lockPath}.takeover`;
  try {
    mkdirSync(guardPath, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // A taker that died mid-takeover leaves the guard behind: an old one is cleared for the next attempt.
    try {
      if (Date.now() - statSync(guardPath).mtimeMs > staleMs) rmdirSync(guardPath);
    } catch {
      // gone already, or another process cleared it
    }
    return undefined;
  }
  try {
    const again = inspect(lockPath);
    if (again !== undefined) {
      if (again.mtimeMs !== seenMtimeMs) return undefined;
      rmSync(lockPath, { recursive: true, force: true });
    }
    return create(lockPath);
  } finally {
    rmdirSync(guardPath);
  }
}

class Lock {
  private timer: NodeJS.Timeout | undefined;
  private touched = Date.now();

  constructor(
    readonly path: string,
    private readonly token: string,
  ) {
    held.add(this);
  }

  private beatNow = (): void => undefined;

  startHeartbeat(staleMs: number, onCompromised: ((error: Error) => void) | undefined): void {
    this.timer = setInterval(() => this.beat(staleMs, onCompromised), Math.max(Math.floor(staleMs / 3), 250)).unref();
    this.beatNow = () => {
      if (held.has(this) && Date.now() - this.touched > staleMs) this.beat(staleMs, onCompromised);
    };
  }

  /**
   * Before an act only the holder may do: untouched for longer than a takeover needs (this process was stopped, and
   * its timers have not run yet), the lock is looked at now, so a lock taken over is known before anything is sent.
   */
  verify(): void {
    this.beatNow();
  }

  release(): void {
    if (!held.has(this)) return;
    clearInterval(this.timer);
    held.delete(this);
    if (!this.stillOurs()) return;
    try {
      rmSync(this.path, { recursive: true, force: true });
    } catch {
      // A directory made read-only meanwhile: the lock stays, taken over at once as its pid is gone.
    }
  }

  private beat(staleMs: number, onCompromised: ((error: Error) => void) | undefined): void {
    if (this.stillOurs()) {
      try {
        const now = new Date();
        utimesSync(this.path, now, now);
        this.touched = now.getTime();
        return;
      } catch {
        // the lock went away under us
      }
    }
    clearInterval(this.timer);
    held.delete(this);
    // Stalled past staleMs (stopped by Ctrl-Z or SIGSTOP, a suspended machine): taken over, even when the taker
    // has since let it go. Else removed (its files or its directory deleted: no owner at all), or taken over.
    const stalledMs = Date.now() - this.touched;
    const removed = stalledMs <= staleMs && readOwner(this.path) === undefined;
    onCompromised?.(
      removed
        ? Object.assign(new Error(`the lock ${this.path} was removed`), { code: 'ENOENT' })
        : new Error(
            `the lock ${this.path} was taken over by another process${stalledMs > staleMs ? ` while this one was stopped for ${Math.floor(stalledMs / 1000)} s` : ''}`,
          ),
    );
  }

  private stillOurs(): boolean {
    return readOwner(this.path)?.token === this.token;
  }
}

function readOwner(lockPath: string): OwnerRecord | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(lockPath, OWNER_FILE), 'utf8')) as Partial<OwnerRecord>;
    return typeof parsed.token === 'string' && typeof parsed.pid === 'number' ? (parsed as OwnerRecord) : undefined;
  } catch {
    // Missing (the holder is between mkdir and writing it) or unreadable: judged by age alone.
    return undefined;
  }
}

/**
 * The owner as a process of this host: gone (its pid answers ESRCH, or is ours, or where /proc tells, is a zombie
 * or a process started since), or running; undefined when another host's or neither.
 */
function ownerHere(lockPath: string, owner: OwnerRecord | undefined): 'gone' | 'running' | 'stopped' | undefined {
  if (owner?.host !== hostname()) return undefined;
  // This very pid holding no lock there: an earlier run's (a container's facectl is pid 1 again after a restart).
  if (owner.pid === process.pid) return [...held].some((lock) => lock.path === lockPath) ? 'running' : 'gone';
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // EPERM: another user's process, which runs.
    if (code !== 'EPERM') return code === 'ESRCH' ? 'gone' : undefined;
  }
  const stat = procStat(owner.pid);
  // No /proc (macOS): the pid answered. A zombie is dead, only not yet reaped by its parent.
  if (stat === undefined) return 'running';
  if (stat.state === 'Z' || (owner.start !== undefined && stat.start !== owner.start)) return 'gone';
  return stat.state === 'T' || stat.state === 't' ? 'stopped' : 'running';
}

/** A process's state and start time (fields 3 and 22 of /proc/PID/stat), where there is /proc. */
function procStat(pid: number): { state: string; start: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] as string, start: fields[19] as string };
  } catch {
    return undefined;
  }
}

import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * A lock between processes on one file: the config file, a batch's journal.
 *
 * proper-lockfile's design: the lock is a directory (`mkdir` creates it or fails, atomically) that its
 * holder touches every staleMs/3; one not touched for `staleMs` is stale and taken over. The owner
 * record inside (a token, the pid and host name) tells the holder the lock is still its own, and a lock
 * whose holder's pid is gone from this host (ESRCH) is stale at once, so a run killed with kill -9 keeps
 * no one waiting (a pid that still answers is judged by age).
 * Unlike proper-lockfile (its rmdir + mkdir lets the slower of two takers remove the lock the faster one
 * just made), a stale lock is taken over under a short-lived second lock (`<path>.takeover`) and checked
 * again while holding it. Waiting for a held lock (waitForLock) is asynchronous.
 */

export interface LockOptions {
  /** A lock not touched for this long is stale. Default 10 s. */
  staleMs?: number;
  /** Called when the lock was taken away from us (we stalled past staleMs). Default: ignore. */
  onCompromised?: (error: Error) => void;
}

export class LockHeldError extends Error {
  readonly code = 'ELOCKED';
  constructor(
    readonly lockPath: string,
    /** The holder's pid as it recorded it, for messages only. */
    readonly ownerPid: number | undefined,
    /** Time since the holder last touched the lock; it is taken over once this reaches staleMs. */
    readonly ageMs = 0,
  ) {
    super(`${lockPath} is held by another process${ownerPid ? ` (pid ${ownerPid})` : ''}`);
  }
}

export interface HeldLock {
  readonly path: string;
  /** Removes the lock if this process still holds it. Safe to call twice. */
  release(): void;
}

interface OwnerRecord {
  token: string;
  pid: number;
  host?: string;
}

const DEFAULT_STALE_MS = 10_000;
const OWNER_FILE = 'owner.json';
const held = new Set<Lock>();
let exitHookInstalled = false;

/** Takes the lock at `lockPath` (a directory it creates) at once, or throws LockHeldError. */
export function acquireLock(lockPath: string, options: LockOptions = {}): HeldLock {
  const staleMs = Math.max(options.staleMs ?? DEFAULT_STALE_MS, 1_000);
  const outcome = tryOnce(lockPath, staleMs);
  if (!(outcome instanceof Lock)) throw outcome;
  outcome.startHeartbeat(staleMs, options.onCompromised);
  return outcome;
}

/** Takes the lock, waiting (without blocking the process) up to `waitMs` while another process holds it. */
export async function waitForLock(lockPath: string, options: LockOptions & { waitMs: number }): Promise<HeldLock> {
  const deadline = Date.now() + options.waitMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      return acquireLock(lockPath, options);
    } catch (error) {
      if (!(error instanceof LockHeldError) || Date.now() >= deadline) throw error;
    }
    const ms = Math.min(pause, Math.max(deadline - Date.now(), 1));
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

function tryOnce(lockPath: string, staleMs: number): Lock | LockHeldError {
  const created = create(lockPath);
  if (created) return created;
  const seen = inspect(lockPath);
  if (seen === undefined) return create(lockPath) ?? new LockHeldError(lockPath, undefined);
  const ageMs = Date.now() - seen.mtimeMs;
  const refused = new LockHeldError(lockPath, seen.owner?.pid, Math.max(ageMs, 0));
  if (ageMs <= staleMs && !goneHere(seen.owner)) return refused;
  return takeOver(lockPath, staleMs, seen.mtimeMs) ?? refused;
}

/** mkdir + owner record; undefined when the directory exists already. */
function create(lockPath: string): Lock | undefined {
  try {
    mkdirSync(lockPath, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  }
  const owner: OwnerRecord = { token: randomBytes(12).toString('hex'), pid: process.pid, host: hostname() };
  try {
    writeFileSync(join(lockPath, OWNER_FILE), JSON.stringify(owner), { mode: 0o600 });
  } catch (error) {
    rmSync(lockPath, { recursive: true, force: true });
    throw error;
  }
  return new Lock(lockPath, owner.token);
}

/** The lock's last touch and its owner record; undefined when it is gone. */
function inspect(lockPath: string): { mtimeMs: number; owner: OwnerRecord | undefined } | undefined {
  try {
    return { mtimeMs: statSync(lockPath).mtimeMs, owner: readOwner(lockPath) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Removes a stale lock and takes it, under the takeover lock. Returns undefined when someone else got
 * there first (the lock is held again) or is taking it over right now.
 */
function takeOver(lockPath: string, staleMs: number, seenMtimeMs: number): Lock | undefined {
  const guardPath = `${lockPath}.takeover`;
  try {
    mkdirSync(guardPath, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // A taker that died inside its few microseconds of takeover leaves the guard behind; only an old
    // guard is cleared, and the next attempt goes through the whole check again.
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

class Lock implements HeldLock {
  private timer: NodeJS.Timeout | undefined;
  private released = false;

  constructor(
    readonly path: string,
    private readonly token: string,
  ) {
    held.add(this);
    installExitHook();
  }

  startHeartbeat(staleMs: number, onCompromised: ((error: Error) => void) | undefined): void {
    this.timer = setInterval(() => this.beat(onCompromised), Math.max(Math.floor(staleMs / 3), 250));
    this.timer.unref();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.timer) clearInterval(this.timer);
    held.delete(this);
    if (!this.stillOurs()) return;
    rmSync(this.path, { recursive: true, force: true });
  }

  private beat(onCompromised: ((error: Error) => void) | undefined): void {
    if (this.stillOurs()) {
      try {
        const now = new Date();
        utimesSync(this.path, now, now);
        return;
      } catch {
        // fall through: the lock went away under us
      }
    }
    if (this.timer) clearInterval(this.timer);
    this.released = true;
    held.delete(this);
    onCompromised?.(new Error(`the lock ${this.path} was taken over by another process`));
  }

  private stillOurs(): boolean {
    return readOwner(this.path)?.token === this.token;
  }
}

function readOwner(lockPath: string): OwnerRecord | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(lockPath, OWNER_FILE), 'utf8')) as Partial<OwnerRecord>;
    if (typeof parsed.token !== 'string' || typeof parsed.pid !== 'number') return undefined;
    return { token: parsed.token, pid: parsed.pid, ...(typeof parsed.host === 'string' ? { host: parsed.host } : {}) };
  } catch {
    // Missing (the holder is between mkdir and writing it) or unreadable: judged by age alone.
    return undefined;
  }
}

/** The holder was a process of this host that no longer exists. */
function goneHere(owner: OwnerRecord | undefined): boolean {
  if (owner?.host !== hostname() || owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Locks still held when the process exits (an error path that forgot, a signal) are released. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const lock of [...held]) lock.release();
  });
}

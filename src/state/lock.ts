import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * A lock between processes on one file: the config file, a batch's journal, a `serve --data` file.
 *
 * The lock is a directory (`mkdir` either creates it or fails, atomically, on every file system we
 * support). Its holder keeps touching it (a heartbeat), so a lock whose holder died (kill -9, a crash, a
 * lost machine) is known by its age alone, with no pid to trust, across containers and hosts. As a fast
 * path, the directory also holds an owner record; when that record names this very machine (host name
 * and boot id) and its pid is gone (or a zombie, or a later process's: its start time differs), the lock
 * is taken over at once instead of after `staleMs`.
 *
 * Only a lock's holder removes it, with one exception: a stale lock. Taking one over happens under a
 * second, short-lived lock (`<path>.takeover`), and the stale lock is checked again while holding it,
 * so two processes that both saw it stale can never both remove it and both go on: the second sees the
 * first one's fresh lock and reports it as held.
 */

export interface LockOptions {
  /** A lock not touched for this long is stale. Default 10 s. */
  staleMs?: number;
  /** How long to keep trying while another process holds the lock. Default 0: fail at once. */
  waitMs?: number;
  /** Called when the lock was taken away from us (we stalled past staleMs). Default: ignore. */
  onCompromised?: (error: Error) => void;
}

export class LockHeldError extends Error {
  readonly code = 'ELOCKED';
  constructor(
    readonly lockPath: string,
    /** The holder's pid when it is a process on this machine, for messages only. */
    readonly ownerPid: number | undefined,
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
  host: string;
  boot: string;
  /** The holder's start time (processStat), telling it from a later process given the same pid. */
  start?: string;
}

const DEFAULT_STALE_MS = 10_000;
const OWNER_FILE = 'owner.json';
const held = new Set<Lock>();
let exitHookInstalled = false;

/** Takes the lock at `lockPath` (a directory it creates), or throws LockHeldError. */
export function acquireLock(lockPath: string, options: LockOptions = {}): HeldLock {
  const staleMs = Math.max(options.staleMs ?? DEFAULT_STALE_MS, 1_000);
  const deadline = Date.now() + (options.waitMs ?? 0);
  let pause = 5;
  for (;;) {
    const outcome = tryOnce(lockPath, staleMs);
    if (outcome instanceof Lock) {
      outcome.startHeartbeat(staleMs, options.onCompromised);
      return outcome;
    }
    if (Date.now() >= deadline) throw outcome;
    sleepSync(Math.min(pause, Math.max(deadline - Date.now(), 1)));
    pause = Math.min(pause * 2, 100);
  }
}

function tryOnce(lockPath: string, staleMs: number): Lock | LockHeldError {
  const created = create(lockPath);
  if (created) return created;
  const seen = inspect(lockPath, staleMs);
  if (seen === 'gone') return create(lockPath) ?? new LockHeldError(lockPath, undefined);
  if (!seen.stale) return new LockHeldError(lockPath, seen.owner?.pid);
  return takeOver(lockPath, staleMs, seen.mtimeMs) ?? new LockHeldError(lockPath, seen.owner?.pid);
}

/** mkdir + owner record; undefined when the directory exists already. */
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
    boot: bootId(),
    ...startOfThisProcess(),
  };
  try {
    writeFileSync(join(lockPath, OWNER_FILE), JSON.stringify(owner), { mode: 0o600 });
  } catch (error) {
    rmSync(lockPath, { recursive: true, force: true });
    throw error;
  }
  return new Lock(lockPath, owner.token);
}

type Seen = 'gone' | { stale: boolean; mtimeMs: number; owner: OwnerRecord | undefined };

function inspect(lockPath: string, staleMs: number): Seen {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(lockPath).mtimeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  const owner = readOwner(lockPath);
  const old = Date.now() - mtimeMs > staleMs;
  return { stale: old || (owner !== undefined && ownerIsDeadHere(owner)), mtimeMs, owner };
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
    const again = inspect(lockPath, staleMs);
    if (again !== 'gone') {
      if (!again.stale || again.mtimeMs !== seenMtimeMs) return undefined;
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
    const { token, pid, host, boot, start } = parsed;
    return { token, pid, host: String(host), boot: String(boot), ...(typeof start === 'string' ? { start } : {}) };
  } catch {
    // Missing (the holder is between mkdir and writing it) or unreadable: judged by age alone.
    return undefined;
  }
}

function ownerIsDeadHere(owner: OwnerRecord): boolean {
  if (owner.host !== hostname() || owner.boot !== bootId() || owner.boot === '') return false;
  if (owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  // The pid answers, but it may not be the holder running: a process killed (kill -9) whose parent has
  // not reaped it yet (a zombie), or a later process given the same pid.
  const now = processStat(owner.pid);
  if (now === undefined) return false;
  return 'ZXx'.includes(now.state) || (owner.start !== undefined && now.start !== owner.start);
}

/** The state letter and start time (clock ticks since boot) of a process, from Linux's /proc; else undefined. */
function processStat(pid: number | 'self'): { state: string; start: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (name) state ppid ...`: the name may hold spaces and parentheses; the fields follow its last `)`.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [state, start] = [fields[0], fields[19]];
    return state && start ? { state, start } : undefined;
  } catch {
    return undefined;
  }
}

let cachedStart: { start?: string } | undefined;
function startOfThisProcess(): { start?: string } {
  if (cachedStart === undefined) {
    const start = processStat('self')?.start;
    cachedStart = start === undefined ? {} : { start };
  }
  return cachedStart;
}

let cachedBootId: string | undefined;
/** The kernel's id of this boot (Linux); a pid is meaningful only within one boot of one machine. */
function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = '';
    }
  }
  return cachedBootId;
}

/** Locks still held when the process exits (an error path that forgot, a signal) are released. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const lock of [...held]) lock.release();
  });
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';

/**
 * A child process the test started itself (to signal it, close its pipes, or drive a terminal):
 * its output so far, its exit, and waits on conditions, each with a guard so a hung process fails the
 * test instead of stalling it.
 */

export interface Watched {
  stdout(): string;
  stderr(): string;
  /** `code` as a shell reports it (shellStatus): 130 for a death by SIGINT. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when stderr matches; fails once the process has ended without it, or after 15 s. */
  waitFor(pattern: RegExp): Promise<void>;
}

/**
 * The exit status a shell would show (`$?`): the code, or 128 + the signal's number for a death by a
 * signal (facectl interrupted by Ctrl-C ends by SIGINT itself: 130; by SIGTERM: 143). `signal` still
 * tells the two apart.
 */
export function shellStatus(code: number | null, signal: NodeJS.Signals | null): number | null {
  return code === null && signal !== null ? 128 + constants.signals[signal] : code;
}

/** Resolves once `check()` holds (polled every 5 ms); fails after `timeoutMs`, naming `what`. */
export async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Collects the child's stdout and stderr; kills it with SIGKILL if it still runs after `guardMs`. */
export function watchChild(child: ChildProcess, guardMs = 20_000): Watched {
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), guardMs);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code: shellStatus(code, signal), signal });
    }),
  );
  return {
    stdout: () => out,
    stderr: () => err,
    exit,
    waitFor: async (pattern) => {
      const deadline = Date.now() + 15_000;
      while (!pattern.test(err)) {
        if (Date.now() > deadline || child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`never saw ${pattern}: ${err}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

import type { ChildProcess } from 'node:child_process';

/**
 * A child process the test started itself (to signal it, close its pipes, or drive a terminal):
 * its output so far, its exit, and waits on conditions, each with a guard so a hung process fails the
 * test instead of stalling it.
 */

export interface Watched {
  stdout(): string;
  stderr(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when stderr matches; fails once the process has ended without it, or after 15 s. */
  waitFor(pattern: RegExp): Promise<void>;
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
      resolve({ code, signal });
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

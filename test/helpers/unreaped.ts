import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * A process whose parent never reaps it: `sh` starts `command` in the background and then becomes
 * `sleep`, which never waits for children. Killed (kill -9), it stays a zombie, its pid still answering
 * kill(pid, 0), until `end()` ends the parent: a run killed under a supervisor that has not reaped it yet.
 */
export interface Unreaped {
  pid: number;
  /** kill -9 to the command, then waits until it is a zombie. */
  kill(): Promise<void>;
  /** Ends the parent (the zombie goes with it). */
  end(): void;
}

export async function startUnreaped(command: string, env: NodeJS.ProcessEnv = process.env): Promise<Unreaped> {
  const parent = spawn('sh', ['-c', `${command} </dev/null >/dev/null 2>&1 & echo $!; exec sleep 60`], {
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const pid = await new Promise<number>((resolve, reject) => {
    parent.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString('utf8').trim())));
    parent.once('error', reject);
  });
  return {
    pid,
    kill: async () => {
      // Until the shell has become `sleep`, it would still reap the killed command itself.
      const deadline = Date.now() + 10_000;
      while (commandOf(parent.pid as number) !== 'sleep') {
        if (Date.now() > deadline) throw new Error(`the parent of pid ${pid} never became sleep`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      process.kill(pid, 'SIGKILL');
      while (processState(pid) !== 'Z') {
        if (Date.now() > deadline) throw new Error(`pid ${pid} never became a zombie`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    end: () => parent.kill('SIGKILL'),
  };
}

/** The state letter of a process (Linux /proc), e.g. R, S, Z; undefined once it is gone. */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** The command name of a process (Linux /proc), e.g. sh, sleep; undefined once it is gone. */
function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

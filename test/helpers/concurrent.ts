import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { makeTempDir } from './temp.js';
import { shellStatus } from './watch-child.js';

/**
 * Two (or N) at once, for real: N processes started on one shared resource (a config file, a batch's
 * journal, a `serve --data` file), held at a start line until all of them are running, then let go
 * together. Each round returns every process's outcome; the test checks its invariant after each round
 * (nothing lost, nothing twice, exactly one winner) and runs many rounds.
 */

const BARRIER = fileURLToPath(new URL('./barrier.mjs', import.meta.url));

export interface Contender {
  /** Program and arguments; `process.execPath` for node. */
  command: string;
  args: string[];
  env?: Record<string, string | undefined>;
  cwd?: string;
  stdin?: string;
}

export interface ContenderResult {
  index: number;
  /** As a shell's `$?`: 128 + the signal's number for a death by a signal (130: SIGINT). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RaceOptions {
  /** Each process is killed after this long (default 30 s); a killed one has signal SIGKILL. */
  timeoutMs?: number;
  /** Called as each process ends (a test may hold a shared resource until the others are done). */
  onExit?: (result: ContenderResult) => void;
}

/** Starts every contender, releases them together, and waits for all of them to end. */
export async function race(contenders: Contender[], options: RaceOptions = {}): Promise<ContenderResult[]> {
  const startFile = join(makeTempDir('facectl-race-'), 'go');
  const timeoutMs = options.timeoutMs ?? 30_000;
  const running = contenders.map((contender, index) => start(contender, index, startFile, timeoutMs, options.onExit));
  // Every child blocks in the preload until the start file exists; spawning takes longer than the
  // preload's check, so the file is written once all of them have been spawned.
  await Promise.all(running.map((r) => r.spawned));
  writeFileSync(startFile, '');
  return Promise.all(running.map((r) => r.done));
}

/** Runs `round` `count` times, one after the other, and returns what each returned. */
export async function rounds<T>(count: number, round: (n: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let n = 0; n < count; n++) results.push(await round(n));
  return results;
}

function start(
  contender: Contender,
  index: number,
  startFile: string,
  timeoutMs: number,
  onExit: ((result: ContenderResult) => void) | undefined,
) {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...process.env, ...contender.env })) {
    if (value !== undefined) env[name] = value;
  }
  env.FACECTL_TEST_BARRIER = startFile;
  env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --import ${JSON.stringify(pathToFileURL(BARRIER).href)}`.trim();
  const child = spawn(contender.command, contender.args, {
    cwd: contender.cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', reject);
  });
  const done = new Promise<ContenderResult>((resolve) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const result = {
        index,
        code: shellStatus(code, signal),
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      };
      onExit?.(result);
      resolve(result);
    });
  });
  child.stdin.on('error', () => {});
  child.stdin.end(contender.stdin ?? '');
  return { spawned, done };
}

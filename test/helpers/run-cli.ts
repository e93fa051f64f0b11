import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir } from './temp.js';
import { shellStatus } from './watch-child.js';

/**
 * Runs the built bin (`node bin/facectl.js`; build first with `node scripts/build.mjs --no-types`) as a
 * user's script would, with a clean environment: PATH, HOME, NO_COLOR, a fresh FACECTL_CONFIG_DIR in a
 * temp directory, and nothing else (no FACECTL_API_KEY, no CI, no proxies) unless `env` adds it. An env
 * value of undefined removes the variable.
 */

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'facectl.js');

export interface RunCliOptions {
  env?: Record<string, string | undefined>;
  stdin?: string | Buffer;
  /** Kill the process after this long (default 20 s); the result then has timedOut (and code 137). */
  timeoutMs?: number;
  cwd?: string;
}

export interface RunCliResult {
  /** As a shell's `$?`: 128 + the signal's number for a death by a signal (130: SIGINT). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The FACECTL_CONFIG_DIR the run used (inspect config.json there). */
  configDir: string;
}

export function makeConfigDir(): string {
  return makeTempDir('facectl-cfg-');
}

export function runCli(args: string[], options: RunCliOptions = {}): Promise<RunCliResult> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    NO_COLOR: '1',
  };
  const configDir = options.env?.FACECTL_CONFIG_DIR ?? makeConfigDir();
  env.FACECTL_CONFIG_DIR = configDir;
  // Batch journals go beside the configuration, so a test that reuses a config dir resumes from it.
  env.FACECTL_STATE_DIR = options.env?.FACECTL_STATE_DIR ?? join(configDir, 'state');
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 20_000);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: shellStatus(code, signal),
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        timedOut,
        configDir,
      });
    });
    // A child that exits before reading its input closes the pipe: that is not the test's failure.
    child.stdin.on('error', () => {});
    child.stdin.end(options.stdin ?? '');
  });
}

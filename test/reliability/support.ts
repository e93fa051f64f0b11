import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../src/main.js';
import { type FaultServer, startFaultServer } from '../helpers/fault-server.js';
import { BIN, makeConfigDir, ROOT, type RunCliOptions, type RunCliResult, runCli } from '../helpers/run-cli.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import type { TestService } from '../helpers/service.js';
import { createTestContext, type TestContext, type TestContextOptions } from '../helpers/test-context.js';
import { makeTempDir } from '../helpers/temp.js';

/**
 * Shared by the reliability catalogue's tests: the built bin pointed at a request-counting fault
 * server (to show that nothing was sent), and the same CLI run in-process against it when a test
 * needs client limits (timeouts, size caps) too slow to reach through the bin's defaults.
 */

export const KEY = 'fcs_abcdefgh_0123456789abcdefABCDEFGHIJ0123';

export { ensureBuilt, startFaultServer };
export type { FaultServer };

export function tempDir(): string {
  return makeTempDir('facectl-rel-');
}

export function tempFile(name: string, content: string | Buffer): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
}

/** The bin, logged in (by environment) to the given server. */
export function cliAt(server: { baseUrl: string }, args: string[], options: RunCliOptions = {}): Promise<RunCliResult> {
  return runCli(args, {
    ...options,
    env: { FACECTL_BASE_URL: server.baseUrl, FACECTL_API_KEY: KEY, ...options.env },
  });
}

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
  /** URLs the stub browser was asked to open. */
  browserOpened: string[];
  /** The memory config store after the run. */
  config: TestContext['config']['data'];
}

/** main.run with a test context against the fault server (apiOptions tune timeouts, caps, retries). */
export async function runIn(
  server: { baseUrl: string },
  argv: string[],
  options: TestContextOptions = {},
): Promise<InProcessResult> {
  const tc = createTestContext({ baseUrl: server.baseUrl, apiKey: KEY, ...options });
  try {
    const code = await run(argv, tc.ctx);
    return { code, stdout: tc.stdout(), stderr: tc.stderr(), browserOpened: tc.browserOpened, config: tc.config.data };
  } finally {
    await tc.close();
  }
}

export interface Running {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves when stderr matches. */
  waitFor(pattern: RegExp): Promise<void>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The bin as a child process the test can signal (SIGINT for Ctrl-C, SIGKILL): `stdin` as its input, a fresh
 * config directory unless `env` names one, and a 20 s guard.
 */
export function start(args: string[], env: Record<string, string>, stdin = ''): Running {
  const configDir = env.FACECTL_CONFIG_DIR ?? makeConfigDir();
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      NO_COLOR: '1',
      FACECTL_CONFIG_DIR: configDir,
      FACECTL_STATE_DIR: join(configDir, 'state'),
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end(stdin);
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString('utf8');
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal });
    }),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    waitFor: async (pattern) => {
      const deadline = Date.now() + 15_000;
      while (!pattern.test(err)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`never saw ${pattern}: ${err}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

/** The batch journals left in a config directory's state directory (as `start` and runCli set it). */
export function journalFiles(configDir: string): string[] {
  const dir = join(configDir, 'state', 'batches');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.ndjson'))
    .map((name) => join(dir, name));
}

/** The documents an in-process service stores whose label starts with `prefix`. */
export function stored(service: TestService, prefix: string): { id: string; label: string; content: string }[] {
  return [...service.store.values('documents')]
    .filter((d) => d.label.startsWith(prefix))
    .map((d) => ({ id: d.id, label: d.label, content: d.content }));
}

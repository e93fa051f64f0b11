import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { run } from '../../src/main.js';
import { type FaultServer, startFaultServer } from '../helpers/fault-server.js';
import { BIN, makeConfigDir, ROOT, type RunCliOptions, type RunCliResult, runCli } from '../helpers/run-cli.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import type { TestService } from '../helpers/service.js';
import { createTestContext, type TestContext, type TestContextOptions } from '../helpers/test-context.js';
import { makeTempDir, tempFile } from '../helpers/temp.js';
import { until, type Watched, watchChild } from '../helpers/watch-child.js';

/**
 * Shared by the reliability catalogue's tests: the built bin pointed at a request-counting fault
 * server (to show that nothing was sent), and the same CLI run in-process against it when a test
 * needs client limits (timeouts, size caps) too slow to reach through the bin's defaults.
 */

export const KEY = 'fcs_abcdefgh_0123456789abcdefABCDEFGHIJ0123';

export { ensureBuilt, startFaultServer, tempFile, until };
export type { FaultServer };

export function tempDir(): string {
  return makeTempDir('facectl-rel-');
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

export interface Running extends Watched {
  child: ChildProcessWithoutNullStreams;
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
  return { child, ...watchChild(child) };
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

/**
 * An NDJSON batch for the face `alias` in a file of its own: `count` documents labelled `${prefix}${i}`,
 * their content `content(i)` (by default with quotes and characters beyond ASCII).
 */
export function batchFile(
  alias: string,
  prefix: string,
  count: number,
  content = (i: number) => `${prefix}${i}: "naïve" 日本 🎉 ✓`,
): { file: string; lines: string[] } {
  const lines = Array.from({ length: count }, (_, i) =>
    JSON.stringify({ alias, label: `${prefix}${i}`, content: content(i) }),
  );
  return { file: tempFile('batch.ndjson', `${lines.join('\n')}\n`), lines };
}

/** The environment of a batch run: a fresh config directory (so its own journal), the key and the URL. */
export function batchEnv(
  key: string,
  baseUrl: string,
): { FACECTL_CONFIG_DIR: string; FACECTL_API_KEY: string; FACECTL_BASE_URL: string } {
  return { FACECTL_CONFIG_DIR: makeConfigDir(), FACECTL_API_KEY: key, FACECTL_BASE_URL: baseUrl };
}

/** The labels of the documents stored with this prefix, sorted: a label twice means a line created twice. */
export function storedLabels(service: TestService, prefix: string): string[] {
  return stored(service, prefix)
    .map((d) => d.label)
    .sort();
}

/** A batch's NDJSON result lines (--json), parsed. */
export function resultLines(stdout: string): {
  line: number;
  ok: boolean;
  document_id?: string;
  token_count?: number;
  resumed?: boolean;
  error?: { code: string; message: string };
}[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ReturnType<typeof resultLines>[number]);
}

/** A base URL nothing listens on (a port just closed): every connection is refused, nothing is sent. */
export async function unreachableUrl(): Promise<string> {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as { port: number };
  await new Promise((resolve) => closed.close(resolve));
  return `http://127.0.0.1:${port}`;
}

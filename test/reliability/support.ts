import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../src/main.js';
import { type FaultServer, startFaultServer } from '../helpers/fault-server.js';
import { type RunCliOptions, type RunCliResult, runCli } from '../helpers/run-cli.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { createTestContext, type TestContext, type TestContextOptions } from '../helpers/test-context.js';

/**
 * Shared by the reliability catalogue's tests: the built bin pointed at a request-counting fault
 * server (to show that nothing was sent), and the same CLI run in-process against it when a test
 * needs client limits (timeouts, size caps) too slow to reach through the bin's defaults.
 */

export const KEY = 'fcs_abcdefgh_0123456789abcdefABCDEFGHIJ0123';

export { ensureBuilt, startFaultServer };
export type { FaultServer };

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'facectl-rel-'));
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

import { run } from '../../src/main.js';
import type { Plan, TestService } from './service.js';
import { createTestContext, type TestContext, type TestContextOptions } from './test-context.js';

/**
 * Runs facectl in-process (main.run: commander, lazy verb modules, error rendering, exit codes) with
 * a test context pointed at a real local service, as a user of the given plan. Used by the unit tests
 * of the domain commands (keys, faces, import, docs, threads, oauth).
 */

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
  tc: TestContext;
}

export interface AsUserOptions extends TestContextOptions {
  plan?: Plan;
}

export function contextFor(service: TestService, options: AsUserOptions = {}): TestContext {
  const { plan = 'pro', ...rest } = options;
  return createTestContext({ baseUrl: service.baseUrl, apiKey: service.key(plan), ...rest });
}

export async function runCommand(
  service: TestService,
  argv: string[],
  options: AsUserOptions = {},
): Promise<CommandResult> {
  const tc = contextFor(service, options);
  try {
    const code = await run(argv, tc.ctx);
    return { code, stdout: tc.stdout(), stderr: tc.stderr(), tc };
  } finally {
    await tc.close();
  }
}

/** Requests the service has answered so far (to show that nothing was sent). */
export function requestCount(service: TestService): number {
  return service.stats.requests;
}

/**
 * Approves the local provider's consent page over plain HTTP, as the browser's form would: GET the
 * page, POST decision=approve with the authorization request's fields, follow the redirect to the
 * callback. (The end-to-end test clicks the real button in Chromium.)
 */
export async function approveConsent(authorizeUrl: string, decision: 'approve' | 'deny' = 'approve'): Promise<string> {
  const url = new URL(authorizeUrl);
  const page = await fetch(url, { redirect: 'manual' });
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}: ${await page.text()}`);
  const form = new URLSearchParams(url.search);
  form.set('decision', decision);
  const posted = await fetch(new URL(url.pathname, url), {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    redirect: 'manual',
  });
  const location = posted.headers.get('location');
  if (posted.status !== 302 || !location) throw new Error(`consent form answered ${posted.status}`);
  const callback = await fetch(new URL(location, url), { redirect: 'manual' });
  return callback.text();
}

/** Waits until `check` returns a value (polling every 20 ms), failing after `timeoutMs`. */
export async function eventually<T>(check: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

import { expect } from 'vitest';
import type { Context } from '../../src/context.js';
import { run } from '../../src/main.js';
import { type AsUserOptions, contextFor, requestCount, runCommand } from './command-harness.js';
import type { TestService } from './service.js';
import { createTestContext, type TestContext, type TestContextOptions } from './test-context.js';

/** Small pieces the unit tests share: a whole command line run in-process, the error a promise fails with. */

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  tc: TestContext;
}

/** Runs a whole command line in-process (main.run) with a test context; returns what a user would see. */
export async function runInProcess(argv: string[], options: TestContextOptions = {}): Promise<CliResult> {
  const tc = createTestContext(options);
  try {
    const code = await run(argv, tc.ctx);
    return { code, stdout: tc.stdout(), stderr: tc.stderr(), tc };
  } finally {
    await tc.close();
  }
}

/** The error `promise` rejects with; fails the test when it resolves. */
export async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail');
}

/**
 * A command line written as one line: argv`docs submit --alias ada --file ${path}`. The literal text
 * is split at white space; each interpolated value is one argument as it is (spaces and all).
 */
export function argv(strings: TemplateStringsArray, ...values: unknown[]): string[] {
  const args: string[] = [];
  strings.forEach((text, i) => {
    if (i > 0 && /^\S/.test(text)) throw new Error(`argv: text right after a value: ${text}`);
    if (i < values.length && /\S$/.test(text)) throw new Error(`argv: text right before a value: ${text}`);
    args.push(...text.split(/\s+/).filter(Boolean));
    if (i < values.length) args.push(String(values[i]));
  });
  return args;
}

/** Calls a verb's run function with a context as a user of the service, then closes the context. */
export async function callVerb<T>(
  service: TestService,
  verb: (ctx: Context) => Promise<T>,
  options: AsUserOptions = {},
): Promise<[T, TestContext]> {
  const tc = contextFor(service, options);
  try {
    return [await verb(tc.ctx), tc];
  } finally {
    await tc.close();
  }
}

/**
 * Runs a command line as a user of the service and asserts it was refused before anything was sent:
 * the exit code (2, a usage error, unless told), stderr saying each of `said`, no request at the service.
 */
export async function expectRefused(
  service: TestService,
  args: string[],
  said: string | string[],
  options: AsUserOptions & { code?: number } = {},
) {
  const { code = 2, ...asUser } = options;
  const before = requestCount(service);
  const result = await runCommand(service, args, asUser);
  expect(result.code, result.stderr).toBe(code);
  for (const text of [said].flat()) expect(result.stderr).toContain(text);
  expect(requestCount(service)).toBe(before);
  return result;
}

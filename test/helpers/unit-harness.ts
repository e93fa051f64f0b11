import { run } from '../../src/main.js';
import { createTestContext, type TestContext, type TestContextOptions } from './test-context.js';

/** Small pieces the unit tests share: a whole command line run in-process, the error a promise fails with. */

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  tc: TestContext;
}

/** Runs a whole command line in-process (main.run) with a test context; returns what a user would see. */
export async function runCli(argv: string[], options: TestContextOptions = {}): Promise<CliResult> {
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

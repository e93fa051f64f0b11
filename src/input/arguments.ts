import { UsageError } from '../errors.js';

/**
 * Checks on positional arguments. Kept apart from options.ts, which builds zod schemas when it loads:
 * a verb that needs only these (`faces get`, `docs get`, `threads get`) starts that much sooner.
 */

/** A positional argument that must not be empty (commander accepts `''`). */
export function requireArgument(name: string, value: string | undefined): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`<${name}> must not be empty`);
  return value;
}

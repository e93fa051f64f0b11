import * as z from 'zod';
import { BILLING_SOURCES, PERSPECTIVES } from '../contract/common.js';

/**
 * Schemas for flag values, which commander hands over as strings. Each refuses what the seed does not
 * allow (a type, an enum it lists) with a message that, prefixed with the flag's name by parseOptions,
 * says what is allowed: `--expires-in-days: must be a whole number of days`. Bounds and grammars the
 * local service chose (1-365 days, the slug rule, its import types) are its own to check: the client
 * sends such values unchanged and reports the service's answer.
 */

const WHOLE_NUMBER = /^\s*[+-]?\d+\s*$/;
const DECIMAL_NUMBER = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?\s*$/i;

/** A whole number in [min, max]; `unit` reads in the message ("days", "seconds"). */
export function integerOption(min: number, max: number, unit: string) {
  const rule = `must be a whole number of ${unit} from ${min} to ${max}`;
  return z
    .string()
    .regex(WHOLE_NUMBER, { error: rule })
    .transform(Number)
    .pipe(z.int({ error: rule }).min(min, { error: rule }).max(max, { error: rule }));
}

/** A whole number of days: the seed types expires_in_days as an integer and states no bounds. */
export const daysOption = z
  .string()
  .regex(WHOLE_NUMBER, { error: 'must be a whole number of days' })
  .transform(Number)
  .pipe(z.int({ error: 'must be a whole number of days' }));

/** A finite amount of US dollars, 0 or more. */
export const usdOption = z
  .string()
  .regex(DECIMAL_NUMBER, { error: 'must be an amount of US dollars, e.g. 25 or 7.50' })
  .transform(Number)
  .pipe(
    // zod's number() refuses Infinity (1e309) itself; the message says why.
    z
      .number({ error: 'must be a finite amount of US dollars' })
      .refine((n) => n >= 0, { error: 'must be 0 or more US dollars' }),
  );

/** One of a fixed set; the message lists the allowed values. */
export function choiceOption<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

export const perspectiveOption = choiceOption(PERSPECTIVES);
export const billingSourceOption = choiceOption(BILLING_SOURCES);
/** Import type: the seed lists `document` and leaves the others "not shown", so any word is sent. */
export const importTypeOption = z.string().refine((value) => value.trim() !== '', { error: 'must not be empty' });

/**
 * Checks an alias given as a flag or at a prompt: the seed says only that it is a string (a slug whose
 * grammar it does not give), so the client refuses just an empty one; the service checks its own rule.
 */
export function checkAlias(value: string): true | string {
  if (value.trim() !== '') return true;
  return 'an alias must not be empty';
}

export const aliasOption = z.string().superRefine((value, check) => {
  const verdict = checkAlias(value);
  if (verdict !== true) check.addIssue({ code: 'custom', message: verdict });
});

/** A text flag that, when given, must not be empty or only spaces. */
export const nonEmptyOption = z.string().refine((value) => value.trim() !== '', { error: 'must not be empty' });

/** A positional argument that must not be empty (commander accepts `''`); see arguments.ts. */
export { requireArgument } from './arguments.js';

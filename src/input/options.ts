import * as z from 'zod';
import { ALIAS_PATTERN, ALIAS_RULE, BILLING_SOURCES, IMPORT_TYPES, PERSPECTIVES } from '../contract/common.js';

/**
 * Schemas for flag values, which commander hands over as strings. Each refuses what the service would
 * refuse (or silently mangle) with a message that, prefixed with the flag's name by parseOptions, says
 * what is allowed: `--expires-in-days: must be a whole number of days from 1 to 365`.
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

export const daysOption = integerOption(1, 365, 'days');

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
export const importTypeOption = choiceOption(IMPORT_TYPES);

/** Checks an alias against the slug rule; returns true or the message stating the rule. */
export function checkAlias(value: string): true | string {
  if (value.length >= 3 && value.length <= 64 && ALIAS_PATTERN.test(value)) return true;
  return `${JSON.stringify(value)} is not a valid alias: use ${ALIAS_RULE}`;
}

export const aliasOption = z.string().superRefine((value, check) => {
  const verdict = checkAlias(value);
  if (verdict !== true) check.addIssue({ code: 'custom', message: verdict });
});

/** A text flag that, when given, must not be empty or only spaces. */
export const nonEmptyOption = z.string().refine((value) => value.trim() !== '', { error: 'must not be empty' });

/** A positional argument that must not be empty (commander accepts `''`); see arguments.ts. */
export { requireArgument } from './arguments.js';

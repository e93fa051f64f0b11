import * as z from 'zod/mini';
import '../contract/zod-messages.js';
import { UsageError } from '../errors.js';
import { flagName, splitList } from './kit.js';
import type { Flags, FlagSpec, FlagValues } from './verb.js';

/**
 * The strings commander read, checked against the verb's declaration, every bad value listed by its flag. Only what
 * the seed forbids is refused: the local service's own bounds and grammars (slug, import types) are its to check.
 */
export function checkFlags<F extends Flags>(flags: F, raw: Record<string, unknown>): FlagValues<F> {
  const shape = Object.fromEntries(Object.entries(flags).map(([key, flag]) => [key, schemaOf(key, flag)]));
  const result = z.object(shape).safeParse(raw);
  if (result.success) return result.data as FlagValues<F>;
  const problems = result.error.issues.map((issue) => {
    const key = String(issue.path[0]);
    return `${flagName(key, flags[key])}: ${issue.message}`;
  });
  throw new UsageError(problems.join('\n'));
}

const WHOLE_NUMBER = /^\s*[+-]?\d+\s*$/;
const DECIMAL_NUMBER = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?\s*$/i;

function schemaOf(key: string, flag: FlagSpec): z.ZodMiniType {
  if (flag.value === undefined) return z._default(z.boolean(), flag.negate === true);
  if (flag.repeat) return z.optional(z.array(z.string()));
  const schema =
    flag.type === 'int'
      ? wholeNumber(flag)
      : flag.type === 'usd'
        ? dollars
        : flag.type === 'list'
          ? listOf(key, flag)
          : flag.choices
            ? z.enum(flag.choices as [string, ...string[]], { error: `must be one of ${flag.choices.join(', ')}` })
            : z.string().check(
                z.superRefine((text, check) => {
                  const wrong = flag.check?.(text);
                  if (wrong !== undefined) check.addIssue({ code: 'custom', message: wrong });
                }),
              );
  return flag.default === undefined ? z.optional(schema) : schema;
}

function wholeNumber({ min, max, unit = 'units' }: FlagSpec) {
  const rule = `must be a whole number of ${unit}${min === undefined ? '' : ` from ${min} to ${max}`}`;
  return z.pipe(
    z.pipe(z.string().check(z.regex(WHOLE_NUMBER, { error: rule })), z.transform(Number)),
    z.int({ error: rule }).check(z.gte(min ?? -Infinity, { error: rule }), z.lte(max ?? Infinity, { error: rule })),
  );
}

const dollars = z.pipe(
  z.pipe(
    z.string().check(z.regex(DECIMAL_NUMBER, { error: 'must be an amount of US dollars, e.g. 25 or 7.50' })),
    z.transform(Number),
  ),
  // zod's number() refuses Infinity (1e309) itself; the message says why.
  z
    .number({ error: 'must be a finite amount of US dollars' })
    .check(z.refine((n: number) => n >= 0, { error: 'must be 0 or more US dollars' })),
);

function listOf(key: string, flag: FlagSpec) {
  const split = z.transform((value: string) => splitList(value) ?? []);
  return z.pipe(z.string(), split).check(
    z.superRefine((items: string[], check) => {
      if (items.length < (flag.min ?? 0)) {
        check.addIssue({ code: 'custom', message: `give at least one value (${flagName(key)} a,b)` });
      }
      const wrong = items.map((item) => flag.check?.(item)).find((message) => message !== undefined);
      if (wrong !== undefined) check.addIssue({ code: 'custom', message: wrong });
    }),
  );
}

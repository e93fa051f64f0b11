import * as z from 'zod';
import { UsageError } from '../errors.js';
import { choiceOption, daysOption, integerOption, usdOption } from '../input/options.js';
import { splitList } from './kit.js';
import { type Flags, type FlagSpec, type FlagValues, flagName } from './verb.js';

/**
 * The check of a verb's flags, made from its declaration (verb.ts) when the verb runs: the values
 * commander read, as strings, become the typed values run receives. A bad value is a usage error
 * naming its flag (`--expires-in-days: must be a whole number of days`); every issue is listed.
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

function schemaOf(key: string, flag: FlagSpec): z.ZodType {
  if (flag.value === undefined) return z.boolean().default(flag.negate === true);
  if (flag.repeat) return z.array(z.string()).optional();
  const schema =
    flag.type === 'int'
      ? integerOption(flag.min ?? 0, flag.max ?? Number.MAX_SAFE_INTEGER, flag.unit ?? 'units')
      : flag.type === 'days'
        ? daysOption
        : flag.type === 'usd'
          ? usdOption
          : flag.type === 'list'
            ? listOf(key, flag)
            : flag.choices
              ? choiceOption(flag.choices as [string, ...string[]])
              : z.string().superRefine(ruleOf(flag));
  return flag.default === undefined ? schema.optional() : schema;
}

/** Comma-separated items, each under the flag's rule; `min: 1` wants at least one. */
function listOf(key: string, flag: FlagSpec) {
  return z
    .string()
    .transform((value) => splitList(value) ?? [])
    .superRefine((items, check) => {
      if (items.length < (flag.min ?? 0)) {
        check.addIssue({ code: 'custom', message: `give at least one value (${flagName(key)} a,b)` });
      }
      // The first bad item, said once.
      const wrong = items.map((item) => flag.check?.(item)).find((message) => message !== undefined);
      if (wrong !== undefined) check.addIssue({ code: 'custom', message: wrong });
    });
}

/** The flag's own rule (verb.ts FlagSpec.check) as an issue. */
function ruleOf(flag: FlagSpec) {
  return (text: string, check: z.RefinementCtx) => {
    const wrong = flag.check?.(text);
    if (wrong !== undefined) check.addIssue({ code: 'custom', message: wrong });
  };
}

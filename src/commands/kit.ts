import type { Column, Context } from '../context.js';
import { type AnyRoute, type BodyOf, type ParamsOf, refuseDotSegment } from '../contract/route.js';
import { UsageError } from '../errors.js';
import { envFlag } from '../io/terminal.js';
import type { ArgSpec, Flags, FlagSpec, VerbSpec } from './verb.js';

/** Helpers of the verb files; program.ts loads them with the declarations, so: no zod, prompts or client. */

export function verb<
  const F extends Flags = Record<never, FlagSpec>,
  const A extends readonly ArgSpec[] = [],
  R = unknown,
>(spec: VerbSpec<F, A, R>): VerbSpec<F, A, R> {
  return spec;
}

/** `expiresInDays` -> `--expires-in-days` (`--no-browser` for a negated `browser`). */
export const flagName = (key: string, flag?: FlagSpec): string =>
  `--${flag?.negate ? 'no-' : ''}${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

export type RouteInput<R extends AnyRoute> = { params?: ParamsOf<R>; body?: BodyOf<R> };

export async function send<R extends AnyRoute>(ctx: Context, route: R, input: RouteInput<R>) {
  return (await ctx.api()).call(route, input, { signal: ctx.signal });
}

export const fieldColumns = <T extends object>(...names: (keyof T & string)[]): Column<T>[] =>
  names.map((name) => ({ header: name, value: (row: T) => row[name] }));

export const withExtensionNote = (text: string): string =>
  `${text}\n\nUses an endpoint the published interface does not show (an extension that \`facectl serve\` implements).`;

type Asked = { flag: string; value: string | undefined; message: string; check?: FlagSpec['check'] };

/** The flag's value, else asked on a terminal, else (piped, CI, --no-input) a usage error naming the flag. */
export async function requireValue(ctx: Context, options: Asked): Promise<string> {
  const { flag, value, check = () => undefined } = options;
  if (value !== undefined && value !== '') {
    const wrong = check(value);
    if (wrong !== undefined) throw new UsageError(`${flag}: ${wrong}`);
    return value;
  }
  if (!ctx.io.canPrompt()) throw missingFlags(ctx, [flag]);
  return ctx.prompter.input({
    message: options.message,
    validate: (answer) => (answer.trim() === '' ? 'a value is required' : (check(answer) ?? true)),
  });
}

/** requireValue of each; without a terminal, every one missing is named in one error, not one per run. */
export async function requireValues<const A extends readonly Asked[]>(ctx: Context, asked: A) {
  const missing = asked.filter(({ value }) => value === undefined || value === '').map(({ flag }) => flag);
  if (missing.length > 0 && !ctx.io.canPrompt()) throw missingFlags(ctx, missing);
  const values: string[] = [];
  for (const one of asked) values.push(await requireValue(ctx, one));
  return values as { [K in keyof A]: string };
}

function missingFlags(ctx: Context, flags: string[]): UsageError {
  const named = flags.length === 1 ? `${flags[0]} is` : `${flags.slice(0, -1).join(', ')} and ${flags.at(-1)} are`;
  return new UsageError(`${named} required when not running interactively (${noPrompt(ctx)})`, {
    hint: `pass ${flags.map((flag) => `${flag} VALUE`).join(' ')}`,
  });
}

/** Why nothing is asked (canPrompt() is false), in the terms of what the user can change. */
export function noPrompt(ctx: Context): string {
  if (ctx.globals.noInput) return '--no-input';
  if (envFlag(ctx.env, 'CI')) return 'CI is set';
  if (!ctx.io.stdinIsTTY) return 'standard input is not a terminal';
  return ctx.io.stdoutIsTTY
    ? 'standard error, where questions are asked, is not a terminal'
    : 'standard output is not a terminal';
}

export const notEmpty = (text: string): string | undefined => (text.trim() === '' ? 'must not be empty' : undefined);

/** A positional argument (a path parameter) that must not be empty (commander accepts `''`), nor '.' or '..'. */
export function requireArgument(name: string, value: string | undefined): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`<${name}> must not be empty`);
  // Checked again where the path is filled (route.ts); here too, so a command that asks something first sends nothing.
  refuseDotSegment(name, value);
  return value;
}

/** The seed gives an alias no grammar, so the client refuses only an empty one; the service has its own rule. */
export const checkAlias = (text: string): string | undefined =>
  text.trim() === '' ? 'an alias must not be empty' : undefined;

export async function requireAliasAndLabel(
  ctx: Context,
  flags: { alias?: string | undefined; label?: string | undefined },
  what: 'document' | 'thread',
): Promise<{ alias: string; label: string }> {
  const [alias, label] = await requireValues(ctx, [
    { flag: '--alias', value: flags.alias, message: `Alias of the face the ${what} belongs to`, check: checkAlias },
    { flag: '--label', value: flags.label, message: `Label of the ${what}` },
  ]);
  return { alias, label };
}

type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

type GivenKeys<O> = { [K in keyof O]-?: undefined extends O[K] ? never : K }[keyof O] & string;

/** The request body `requestBody` builds from options of type O: an option that may be missing is optional. */
export type RequestBody<O> = { [K in GivenKeys<O> as SnakeCase<K>]: O[K] } & {
  [K in Exclude<keyof O & string, GivenKeys<O>> as SnakeCase<K>]?: Exclude<O[K], undefined>;
};

/** `expiresInDays` as `expires_in_days`; an option not given is left out, so the service applies its default. */
export function requestBody<O extends object>(options: O): RequestBody<O> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) body[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value;
  }
  return body as RequestBody<O>;
}

/** US dollars with cents, or up to six digits not to round a small amount away (`$0.004`, not `$0.00`). */
export function usd(amount: number): string {
  const text = amount.toFixed(6).replace(/0+$/, '');
  const [whole, fraction = ''] = text.split('.');
  return `$${whole}.${fraction.padEnd(2, '0')}`;
}

/** `a, b,,c` -> ['a', 'b', 'c']; undefined stays undefined (the flag was not given). */
export const splitList = (value: string | undefined): string[] | undefined =>
  value?.split(',').flatMap((item) => item.trim() || []);

/** A word as a POSIX shell reads it back: as is when plain, else in single quotes. */
export const shellWord = (word: string): string =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;

/** `jq [-c] FILTER PATH` as typed (`-`: standard input, no path); a path starting with - would read as jq's option. */
export const jqCommand = (filter: string, path: string, compact = false): string =>
  `jq ${compact ? '-c ' : ''}${shellWord(filter)}${path === '-' ? '' : ` ${shellWord(path.startsWith('-') ? `./${path}` : path)}`}`;

/** A flag and its value as typed: `--file 'my notes.md'`, `--file=--json` for a value spelled like a flag. */
export const flagAndValue = (flag: string, value: string): string =>
  value.startsWith('-') ? shellWord(`${flag}=${value}`) : `${flag} ${shellWord(value)}`;

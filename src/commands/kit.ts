import type { Command } from 'commander';
import type { Column, Context } from '../context.js';
import type { AnyRoute, BodyOf, ParamsOf, ResponseOf } from '../contract/route.js';
import { UsageError } from '../errors.js';
import { setExamples } from '../help-format.js';

/**
 * Small helpers every verb uses. program.ts imports this module, so it must stay cheap: commander types
 * only, no zod, no prompts (those arrive with the verb module that needs them).
 */

/** The examples of a command's `--help` (each one shell line), shown under EXAMPLES. */
export function addExamples(cmd: Command, examples: string[]): Command {
  setExamples(cmd, examples);
  return cmd;
}

/** What a verb that sends one request and shows the answer uses of the context. */
export type RequestContext = Pick<Context, 'api' | 'out' | 'signal'>;

/** One request of the contract, with the context's client, cancelled by Ctrl-C (the context's signal). */
export async function send<R extends AnyRoute>(
  ctx: Pick<Context, 'api' | 'signal'>,
  route: R,
  input: { params?: ParamsOf<R>; body?: BodyOf<R> },
): Promise<ResponseOf<R>> {
  return (await ctx.api()).call(route, input, { signal: ctx.signal });
}

/** Columns that show fields as they are, each under its own name (`token_count` under "token_count"). */
export function fieldColumns<T extends object>(...names: (keyof T & string)[]): Column<T>[] {
  return names.map((name) => ({ header: name, value: (row: T) => row[name] }));
}

/** What a verb that asks for a missing value on a terminal uses of the context (see requireValue). */
export type PromptContext = Pick<Context, 'io' | 'prompter'>;

/** What a verb that reads or changes the settings file uses of the context (`config ...`, `auth logout`). */
export type SettingsContext = Pick<Context, 'config' | 'globals' | 'env' | 'out' | 'io'>;

/** What a verb module exports for its wiring: raw commander options in, work done (what it returns is not used). */
export type VerbAction<A extends unknown[] = string[]> = (
  ctx: Context,
  opts: Record<string, unknown>,
  ...args: A
) => Promise<unknown>;

/** A verb as its group's register module declares it; its module is imported only when it runs. */
export interface VerbSpec {
  /** The one line `facectl <group> --help` lists (else the description's first line). */
  summary?: string;
  description: string;
  arguments?: readonly (readonly [name: string, description: string])[];
  /** Flags, each `[flags, description]` or `[flags, description, default]`, in the order help lists them. */
  options?: readonly (readonly [flags: string, description: string, defaultValue?: string])[];
  /** Shell lines shown under EXAMPLES. */
  examples: string[];
  /** Imports the verb module and returns its action (the verb's own parsing starts there). */
  run: () => Promise<VerbAction>;
}

/**
 * Declares the verbs of a group on commander: `addVerbs(group, ctx, { create: {...}, get: {...} })`.
 * A verb's flags are declared here and parsed in its module by a zod schema whose keys are commander's
 * camel-case names of the same flags (`--expires-in-days` -> `expiresInDays`).
 */
export function addVerbs(parent: Command, ctx: Context, verbs: Readonly<Record<string, VerbSpec>>): void {
  for (const [name, spec] of Object.entries(verbs)) {
    const verb = parent.command(name).description(spec.description);
    if (spec.summary !== undefined) verb.summary(spec.summary);
    for (const [argument, description] of spec.arguments ?? []) verb.argument(argument, description);
    for (const [flags, description, defaultValue] of spec.options ?? []) verb.option(flags, description, defaultValue);
    verb.action(lazyAction(ctx, spec.run));
    addExamples(verb, spec.examples);
  }
}

/** The flags of `docs sync` and `threads sync` (parsed by parseWaitFlags in docs/wait-ready.ts). */
export const WAIT_OPTIONS: VerbSpec['options'] = [
  ['--wait', 'wait until preparation is ready, with a progress bar'],
  ['--timeout <seconds>', 'with --wait: give up after this many seconds (default 300)'],
];

/** A verb's description with the note that it uses an endpoint the published interface does not show. */
export function withExtensionNote(text: string): string {
  return `${text}\n\nUses an endpoint the published interface does not show (an extension that \`facectl serve\` implements).`;
}

/**
 * Wires a commander action to a verb module imported only when the command runs, so `--help` and other
 * commands never pay for it. Commander hands an action its positional arguments, then the options, then
 * the command; the verb receives (ctx, options, ...arguments). The global flags are in ctx.globals (main.ts
 * took them off the line before commander parsed it).
 */
export function lazyAction<A extends unknown[] = string[]>(
  ctx: Context,
  load: () => Promise<VerbAction<A>>,
): (...received: unknown[]) => Promise<void> {
  return async (...received: unknown[]) => {
    const command = received.at(-1) as Command;
    const args = received.slice(0, -2) as A;
    const action = await load();
    await ctx.out.prepare?.();
    await action(ctx, command.opts(), ...args);
  };
}

export interface RequireValueOptions {
  /** The flag that supplies the value, e.g. `--alias`. */
  flag: string;
  value: string | undefined;
  /** The prompt shown on a terminal. */
  message: string;
  /** Returns true, or a message saying what is wrong (shown under the prompt, or in the usage error). */
  validate?: (value: string) => true | string;
  /** Prompt with hidden input (secrets). */
  secret?: boolean;
}

/**
 * Returns the flag's value; when it is missing, asks on a terminal; without one (piped, CI, --no-input)
 * a missing value is a usage error naming the flag, so nothing is sent.
 */
export async function requireValue(ctx: PromptContext, options: RequireValueOptions): Promise<string> {
  const { flag, value, validate } = options;
  if (value !== undefined && value !== '') {
    const verdict = validate ? validate(value) : true;
    if (verdict !== true) throw new UsageError(`${flag}: ${verdict}`);
    return value;
  }
  if (!ctx.io.canPrompt()) {
    throw new UsageError(`${flag} is required when not running interactively`, {
      hint: `pass ${flag} <value>`,
    });
  }
  if (options.secret) {
    const answer = await ctx.prompter.password({ message: options.message });
    const verdict = validate ? validate(answer) : true;
    if (verdict !== true) throw new UsageError(`${flag}: ${verdict}`);
    return answer;
  }
  return ctx.prompter.input({
    message: options.message,
    validate: (answer) => {
      if (answer.trim() === '') return 'a value is required';
      return validate ? validate(answer) : true;
    },
  });
}

/** The part of a zod schema parseOptions uses; typed structurally so this module does not import zod. */
export interface SafeParser<T> {
  /** A zod object's fields: every option commander hands over must be one of them. */
  readonly shape?: object;
  safeParse(
    value: unknown,
  ): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

/** `expiresInDays` -> `--expires-in-days`: commander's camel-case keys back to the flag a person typed. */
export function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/**
 * Parses raw commander options with a verb's zod schema. A bad value becomes a UsageError naming the
 * flag: `--expires-in-days: must be between 1 and 365 days`. Every issue is listed, first one in the message.
 */
export function parseOptions<T>(
  schema: SafeParser<T>,
  raw: Record<string, unknown>,
  flagNameOf: (key: string) => string = flagName,
): T {
  // register.ts declares the flags and the verb's schema parses them, matched by name: a flag the schema
  // does not know would be dropped without a word, so it is a bug in facectl, said at once.
  const unparsed = schema.shape ? Object.keys(raw).filter((key) => !(key in (schema.shape as object))) : [];
  if (unparsed.length > 0) {
    throw new Error(`facectl bug: ${unparsed.map(flagNameOf).join(', ')} declared but not in the verb's option schema`);
  }
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = issue.path[0];
    const where = typeof key === 'string' ? flagNameOf(key) : 'options';
    const rest = issue.path.slice(1).map(String);
    return `${where}${rest.length > 0 ? `[${rest.join('.')}]` : ''}: ${issue.message}`;
  });
  throw new UsageError(problems.join('\n'));
}

/** `expiresInDays` -> `expires_in_days`, as a type: the request field an option fills. */
type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

/** The options of O that are always there (their type does not admit undefined). */
type GivenKeys<O> = { [K in keyof O]-?: undefined extends O[K] ? never : K }[keyof O] & string;

/** The request body `requestBody` builds from options of type O: an option that may be missing is optional. */
export type RequestBody<O> = { [K in GivenKeys<O> as SnakeCase<K>]: O[K] } & {
  [K in Exclude<keyof O & string, GivenKeys<O>> as SnakeCase<K>]?: Exclude<O[K], undefined>;
};

/**
 * A request body from parsed options: `expiresInDays` becomes `expires_in_days`, and an option the user
 * did not give (undefined) is left out, so the service applies its own default. The client adds no
 * value of its own here: what the seed leaves open is the service's choice.
 */
export function requestBody<O extends object>(options: O): RequestBody<O> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) body[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value;
  }
  return body as RequestBody<O>;
}

/** `a, b,,c` -> ['a', 'b', 'c']; undefined stays undefined (the flag was not given). */
export function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** A word as a POSIX shell reads it back: as is when plain, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * A flag and its value as a hint can show them to be typed: `--file notes.md`, `--file 'my notes.md'`,
 * and `--file=--json` for a value spelled like a flag (`--file --json` would be refused).
 */
export function flagAndValue(flag: string, value: string): string {
  return value.startsWith('-') ? shellWord(`${flag}=${value}`) : `${flag} ${shellWord(value)}`;
}

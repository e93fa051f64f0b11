import type { Command } from 'commander';
import type { Context } from '../context.js';
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

/** What a verb module exports for its wiring: raw commander options in, work done, nothing returned. */
export type VerbAction<A extends unknown[] = string[]> = (
  ctx: Context,
  opts: Record<string, unknown>,
  ...args: A
) => Promise<void>;

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
export async function requireValue(ctx: Context, options: RequireValueOptions): Promise<string> {
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

/** `a, b,,c` -> ['a', 'b', 'c']; undefined stays undefined (the flag was not given). */
export function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

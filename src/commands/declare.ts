import { type Command, Option } from 'commander';
import type { Context } from '../context.js';
import type { AnyVerb, ArgSpec, Flags, FlagSpec, GroupSpec } from './verb.js';
import { flagName } from './kit.js';

const DECLARED = new WeakMap<Option, FlagSpec>();

/** The declaration an option was made from (help lists its choices, completion offers its values). */
export const declarationOf = (option: Option): FlagSpec | undefined => DECLARED.get(option);

export function declare(parent: Command, name: string, spec: AnyVerb | GroupSpec, ctx: Context): Command {
  const command = parent.command(name).description(spec.description);
  if (spec.summary !== undefined) command.summary(spec.summary);
  if ('verbs' in spec) {
    for (const [verbName, verbSpec] of Object.entries(spec.verbs)) declare(command, verbName, verbSpec, ctx);
    const firstExamples = Object.values(spec.verbs).flatMap((verb) => verb.examples.slice(0, 1));
    return withExamples(command, firstExamples);
  }
  for (const [argument, help] of (spec.args ?? []) as readonly ArgSpec[]) command.argument(argument, help);
  const flags: Flags = spec.flags ?? {};
  for (const [key, flag] of Object.entries(flags)) {
    const long = `${flagName(key, flag)}${flag.value ? ` ${flag.value}` : ''}`;
    const option = new Option(flag.short ? `${flag.short}, ${long}` : long, flag.help);
    if (flag.default !== undefined) option.default(flag.default, flag.default);
    if (flag.repeat) option.argParser((value: string, previous: string[] = []) => [...previous, value]);
    DECLARED.set(option, flag);
    command.addOption(option);
  }
  command.action(async (...received: unknown[]) => {
    const raw = (received.at(-1) as Command).opts();
    await ctx.out.prepare();
    // zod, for the check, loads only now, and only for a verb with flags.
    const checked = Object.keys(flags).length > 0 ? (await import('./flag-check.js')).checkFlags(flags, raw) : {};
    await spec.run(ctx, checked, ...(received.slice(0, -2) as (string | undefined)[]));
  });
  return withExamples(command, spec.examples);
}

export const withExamples = (command: Command, examples: readonly string[]): Command =>
  command.addHelpText('after', `\nExamples:\n${examples.map((example) => `  $ ${example}`).join('\n')}`);

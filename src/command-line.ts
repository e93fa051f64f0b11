import type { Command, Option } from 'commander';
import { UsageError } from './errors.js';
import { GLOBAL_FLAGS } from './global-flags.js';
import { closestName } from './help-topics.js';

/**
 * Checks of a command line made before commander parses it, walking its words down the command tree:
 *
 * - A flag that takes a value, followed by another flag instead (`docs submit --label --content hi`):
 *   commander would take `--content` as the label and then stumble over `hi`, or complain of something
 *   else. A value flag whose next word is a flag of the same command, a global flag or `--help` is
 *   refused, naming the flag. A value spelled like a flag is written `--label=--content`.
 * - A value flag that ends the line (`docs submit --content hi --label`): refused the same way, where
 *   commander would say `option '--label <label>' argument missing`.
 * - A word that names no command of a group (`facectl nosuch`): commander's error, with a suggestion
 *   only when a command is close to it (commander would offer `oauth` for `nosuch`).
 */

const GLOBAL_VALUE = new Map(GLOBAL_FLAGS.map((global) => [global.flag as string, global.value !== undefined]));
const ALWAYS_FLAGS = new Set(['--help', '-h', '--version', '-V']);

/**
 * The usage error for `flag` followed by `next` (a flag) where its value should be, or ending the line
 * (`next` undefined; `placeholder` is its value as help writes it, `<label>`).
 */
export function needsValueError(
  flag: string,
  next: string | undefined,
  long: string = flag,
  placeholder = '<value>',
): UsageError {
  if (next === undefined) {
    return new UsageError(`${flag} needs a value`, {
      hint: `${flag} ends the line, with nothing after it for its value; write ${long} ${placeholder}`,
    });
  }
  return new UsageError(`${flag} needs a value`, {
    hint: `${next} is a flag, not the value of ${flag}; to give a value spelled like a flag, write ${long}=${next}`,
  });
}

/**
 * Throws needsValueError for the first value flag of `argv` (the whole line, global flags included)
 * that is followed by a flag of its command or ends the line, and commander's error for a word that names no command of
 * its group. `program` is the tree built for the line.
 */
export function checkCommandLine(program: Command, argv: readonly string[]): void {
  let command = program;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (word === '--') return;
    if (!word.startsWith('-') || word === '-') {
      const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
      if (sub) command = sub;
      else if (command.commands.length > 0 && !(command === program && word === 'help')) unknownCommand(command, word);
      continue;
    }
    if (word.includes('=')) continue;
    if (GLOBAL_VALUE.has(word)) {
      // global-flags.ts has checked these; only step over the value.
      if (GLOBAL_VALUE.get(word)) i++;
      continue;
    }
    const option = findOption(command, word);
    if (!option?.required) continue;
    const next = argv[i + 1];
    if (next === undefined || isFlagOf(command, next)) {
      throw needsValueError(word, next, option.long ?? word, /<[^>]+>/.exec(option.flags)?.[0]);
    }
    i++;
  }
}

function findOption(command: Command, word: string): Option | undefined {
  return command.options.find((option) => option.long === word || option.short === word);
}

function isFlagOf(command: Command, word: string): boolean {
  if (!word.startsWith('-') || word === '-') return false;
  const name = word.startsWith('--') ? (word.split('=', 1)[0] as string) : word;
  return ALWAYS_FLAGS.has(name) || GLOBAL_VALUE.has(name) || findOption(command, name) !== undefined;
}

/** Commander's own error (its message, the usage line after it, exit 2), with a suggestion only when close. */
function unknownCommand(group: Command, word: string): never {
  const names = group.commands.filter((c) => !(c as { _hidden?: boolean })._hidden).map((c) => c.name());
  const near = closestName(word, group.parent ? names : [...names, 'help']);
  group.error(`error: unknown command '${word}'${near ? `\n(Did you mean ${near}?)` : ''}`, {
    code: 'commander.unknownCommand',
  });
}

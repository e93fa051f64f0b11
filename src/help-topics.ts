import type { Command } from 'commander';
import { UsageError } from './errors.js';

/**
 * `facectl help A B` is `facectl A B --help`; `facectl help nosuch` is a usage error with a
 * suggestion; a group named without a subcommand (`facectl`, `facectl faces`) prints its help on
 * stdout and exits 0, as gh does. resolveHelp() rewrites such a command line into its `--help` form.
 */

/** The words of a command line (its global flags already taken off) that are not flags, up to `--`. */
function positional(argv: readonly string[]): { words: string[]; flags: string[] } {
  const words: string[] = [];
  const flags: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (word === '--') break;
    if (word.startsWith('-') && word !== '-') flags.push(word);
    else words.push(word);
  }
  return { words, flags };
}

function find(parent: Command, name: string): Command | undefined {
  return parent.commands.find((c) => c.name() === name || c.aliases().includes(name));
}

/**
 * The argv to run instead (a `--help` line), or undefined to run the line as it is. `program` is the
 * tree built for this line; `tree` builds the whole one (for help topics).
 */
export function resolveHelp(argv: readonly string[], program: Command, tree: () => Command): string[] | undefined {
  const { words, flags } = positional(argv);
  if (flags.some((f) => f === '--help' || f === '-h' || f === '--version' || f === '-V')) return undefined;
  if (words[0] === 'help') {
    const topic = words.slice(1);
    // `facectl help help`: the page of `help` itself (program.ts declares it for such a line).
    if (topic[0] === 'help') return ['help', ...flags, '--help'];
    let cmd = tree();
    for (const [i, word] of topic.entries()) {
      const next = find(cmd, word);
      if (!next) throw unknownTopic(topic.slice(0, i + 1), cmd);
      cmd = next;
    }
    return [...topic, ...flags, '--help'];
  }
  if (argv.includes('--')) return undefined;
  // A group (or the program) named without a subcommand: its help, on stdout.
  let cmd = program;
  for (const word of words) {
    const next = find(cmd, word);
    if (!next) return undefined;
    cmd = next;
  }
  return cmd.commands.length > 0 ? [...words, ...flags, '--help'] : undefined;
}

/**
 * The name of `names` closest to a mistyped `word`, when it is close: at most 2 edits (a third of the
 * word's length for long words), or the word is its beginning. Undefined when nothing is that close.
 */
export function closestName(word: string, names: readonly string[]): string | undefined {
  return names
    .map((name) => ({ name, distance: distance(name, word) }))
    .filter((c) => c.distance <= Math.max(2, Math.floor(word.length / 3)) || c.name.startsWith(word))
    .sort((a, b) => a.distance - b.distance)[0]?.name;
}

function unknownTopic(topic: string[], parent: Command): UsageError {
  const wrong = topic.at(-1) as string;
  const near = closestName(
    wrong,
    parent.commands.map((c) => c.name()),
  );
  const prefix = topic.slice(0, -1);
  const hint = near
    ? `did you mean \`facectl help ${[...prefix, near].join(' ')}\`?`
    : `run \`facectl help${prefix.length > 0 ? ` ${prefix.join(' ')}` : ''}\` for the list of commands`;
  return new UsageError(`unknown help topic "${topic.join(' ')}"`, { hint });
}

/** Edit distance (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      next[j] = Math.min((row[j] as number) + 1, (next[j - 1] as number) + 1, (row[j - 1] as number) + cost);
    }
    row = next;
  }
  return row[b.length] as number;
}

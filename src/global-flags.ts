import type { GlobalOptions } from './context.js';

/**
 * The global flags, read from the command line once, before commander sees it (main.ts). They may be
 * written before or after the subcommand, anywhere up to a `--`; they are taken out of the line, so
 * commander parses only the command's own words and nothing else works them out again. program.ts
 * still declares them on the program, for help and completion.
 */

/** Global flags that take a value, as the next word or written `--flag=value`. */
const VALUE_FLAGS = {
  '--base-url': 'baseUrl',
  '--profile': 'profile',
  '--jq': 'jq',
} as const satisfies Record<string, keyof GlobalOptions>;

/** What program.ts calls each value, for the usage error when it is missing. */
const VALUE_NAMES: Record<keyof typeof VALUE_FLAGS, string> = {
  '--base-url': '<url>',
  '--profile': '<name>',
  '--jq': '<expression>',
};

const SWITCHES = {
  '--json': 'json',
  '--no-input': 'noInput',
  '--debug': 'debug',
  '--insecure-http': 'insecureHttp',
  '--api-key-stdin': 'apiKeyStdin',
} as const satisfies Record<string, keyof GlobalOptions>;

export interface CommandLine {
  /** The global flags the line gives (absent ones are left out); `--jq` implies `json`. */
  given: Partial<GlobalOptions>;
  /** The line without them: what commander parses. */
  words: string[];
  /** A value flag that ends the line without its value, as `--profile <name>` (a usage error). */
  missingValue?: string;
}

export function splitGlobalFlags(argv: readonly string[]): CommandLine {
  const given: Partial<Record<keyof GlobalOptions, string | boolean>> = {};
  const words: string[] = [];
  let missingValue: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (word === '--') {
      words.push(...argv.slice(i));
      break;
    }
    const equals = word.startsWith('--') ? word.indexOf('=') : -1;
    const name = equals > 0 ? word.slice(0, equals) : word;
    if (Object.hasOwn(SWITCHES, word)) {
      given[SWITCHES[word as keyof typeof SWITCHES]] = true;
    } else if (Object.hasOwn(VALUE_FLAGS, name)) {
      const key = VALUE_FLAGS[name as keyof typeof VALUE_FLAGS];
      if (equals > 0) given[key] = word.slice(equals + 1);
      else if (i + 1 < argv.length) given[key] = argv[++i] as string;
      else missingValue = `${name} ${VALUE_NAMES[name as keyof typeof VALUE_FLAGS]}`;
    } else {
      words.push(word);
    }
  }
  if (given.jq !== undefined) given.json = true;
  return { given: given as Partial<GlobalOptions>, words, ...(missingValue ? { missingValue } : {}) };
}

import type { GlobalOptions } from './context.js';

/**
 * The global flags, read from the command line once, before commander sees it (main.ts). They may be
 * written before or after the subcommand, anywhere up to a `--`; they are taken out of the line, so
 * commander parses only the command's own words and nothing else works them out again. program.ts
 * declares them on the program from GLOBAL_FLAGS, for help and completion.
 */

/** A global flag: how it is written, the value it takes (if any), the field of ctx.globals it sets, its help. */
export interface GlobalFlag {
  flag: `--${string}`;
  value?: `<${string}>`;
  key: keyof GlobalOptions;
  help: string;
}

/** The global flags, in the order `--help` lists them; program.ts declares them from this table. */
export const GLOBAL_FLAGS: readonly GlobalFlag[] = [
  {
    flag: '--base-url',
    value: '<url>',
    key: 'baseUrl',
    help: 'service base URL (else FACECTL_BASE_URL, the profile, http://127.0.0.1:8787)',
  },
  {
    flag: '--profile',
    value: '<name>',
    key: 'profile',
    help: 'configuration profile to use (else FACECTL_PROFILE, default_profile)',
  },
  { flag: '--json', key: 'json', help: 'print one JSON document on stdout; an error is one JSON document on stderr' },
  {
    flag: '--jq',
    value: '<expression>',
    key: 'jq',
    help: 'filter the JSON output with a jq expression (implies --json)',
  },
  { flag: '--no-input', key: 'noInput', help: 'never prompt: a missing value is an error naming its flag' },
  {
    flag: '--debug',
    key: 'debug',
    help: 'trace HTTP exchanges on stderr (Authorization redacted) and show stack traces',
  },
  { flag: '--insecure-http', key: 'insecureHttp', help: 'allow plain http to hosts other than loopback' },
  { flag: '--api-key-stdin', key: 'apiKeyStdin', help: 'read the API key from the first line of standard input' },
];

const BY_FLAG = new Map(GLOBAL_FLAGS.map((global) => [global.flag as string, global]));

export interface CommandLine {
  /** The global flags the line gives (absent ones are left out); `--jq` implies `json`. */
  given: Partial<GlobalOptions>;
  /** The line without them: what commander parses. */
  words: string[];
  /** A value flag that ends the line without its value, as `--profile` (`<name>`) (a usage error). */
  missingValue?: { flag: string; value: string };
  /** A value flag followed by another flag instead of its value, as `--profile --json` (a usage error). */
  flagForValue?: { flag: string; next: string };
}

/** Words that are flags wherever they stand, so never taken as a global flag's value: `--profile --json`. */
export function isKnownFlag(word: string): boolean {
  const name = word.startsWith('--') ? word.split('=', 1)[0] : undefined;
  return name !== undefined && (BY_FLAG.has(name) || name === '--help' || name === '--version');
}

export function splitGlobalFlags(argv: readonly string[]): CommandLine {
  const given: Partial<Record<keyof GlobalOptions, string | boolean>> = {};
  const words: string[] = [];
  let missingValue: CommandLine['missingValue'];
  let flagForValue: CommandLine['flagForValue'];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (word === '--') {
      words.push(...argv.slice(i));
      break;
    }
    const equals = word.startsWith('--') ? word.indexOf('=') : -1;
    const global = BY_FLAG.get(equals > 0 ? word.slice(0, equals) : word);
    if (global === undefined) words.push(word);
    else if (global.value === undefined) {
      // A switch; `--json=x` is no switch: left to commander, which refuses it.
      if (equals > 0) words.push(word);
      else given[global.key] = true;
    } else if (equals > 0) given[global.key] = word.slice(equals + 1);
    else if (i + 1 >= argv.length) missingValue = { flag: global.flag, value: global.value };
    else if (isKnownFlag(argv[i + 1] as string)) flagForValue ??= { flag: global.flag, next: argv[i + 1] as string };
    else given[global.key] = argv[++i] as string;
  }
  if (given.jq !== undefined) given.json = true;
  return {
    given: given as Partial<GlobalOptions>,
    words,
    ...(missingValue ? { missingValue } : {}),
    ...(flagForValue ? { flagForValue } : {}),
  };
}

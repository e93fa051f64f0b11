import { CliError, ExitCode, UsageError } from '../errors.js';

/** `--jq EXPR` through jq-web (jq 1.7 in WebAssembly), loaded with the flag; strings come out raw, as in gh. */
export type JqFilter = { apply(json: string, compact: boolean, streamed?: boolean): string };

type JqWeb = { raw(input: string, filter: string, flags?: string[]): string | undefined };

type JqFailure = { exitCode?: number; stderr?: string; message?: string };

function jqMessage(error: JqFailure): string {
  const text = (error.stderr ?? error.message ?? 'jq failed').replace(/^undefined/, '');
  const lines = text
    .split('\n')
    // `error (at inputString:0):` names jq-web's input file, nothing of the user's.
    .map((line) => line.replace(/^(jq: (error: )?)?(error \(at inputString:\d+\): )?/, '').trim())
    .filter((line) => line !== '' && !/^\d+ compile errors?$/.test(line) && !/^Non-zero exit code/.test(line));
  // A crashing engine (no exit code) ends its message with a hint for jq-web's own developers.
  const message = (lines.join('; ').replace(/:; /g, ': ') || 'jq failed').replace(ENGINE_HINT, '');
  return error.exitCode === undefined ? `jq's engine failed on this expression (${message})` : message;
}

const ENGINE_HINT = /\.? ?Build with -sASSERTIONS for more info\.?$/;

/** jq-web compiles deaf to signals, and 28,000 `.|` never end; up to 8192 characters every shape tried took < 0.5 s. */
export const JQ_MAX_CHARACTERS = 8192;

/** Bracket nesting (string interpolation included): jq-web crashes running deeper (512 `[` on null). */
export const JQ_MAX_NESTING = 256;

function nesting(expression: string): number {
  let deepest = 0;
  // One entry per open bracket; `"` marks an interpolation `\(` whose `)` goes back into its string.
  const open: string[] = [];
  let inString = false;
  for (let i = 0; i < expression.length; i++) {
    const c = expression[i];
    if (inString) {
      if (c === '"') inString = false;
      else if (c === '\\' && expression[i + 1] === '(') {
        open.push('"');
        inString = false;
        i++;
      } else if (c === '\\') i++;
    } else if (c === '"') inString = true;
    else if (c === '#') while (i + 1 < expression.length && expression[i + 1] !== '\n') i++;
    else if (c === '(' || c === '[' || c === '{') open.push(c);
    else if (c === ')' || c === ']' || c === '}') inString = open.pop() === '"';
    deepest = Math.max(deepest, open.length);
  }
  return deepest;
}

/** jq's own options given to --jq (`--jq -r`): refused before the word after reads as a stray argument. */
export function refuseJqOption(expression: string): void {
  const option = /^\s*(-[rcjesnaSCM]+|--[a-z-]+)(?:\s|$)/.exec(expression)?.[1];
  // `-nan` is jq's negated nan, spelled with option letters only.
  if (option !== undefined && option !== '-nan') {
    throw jqOptionError(`--jq: ${option} is an option of jq, not an expression`, option);
  }
}

/** jq's options, as gh users add them after --jq (`--jq .name -r`, `--raw-output`). */
export const JQ_OPTION =
  /^(-[rcjesnaSCM]+|--(raw-output|compact-output|join-output|ascii-output|sort-keys|slurp|null-input|raw-input|exit-status|tab|indent|arg|argjson|seq))$/;

export function jqOptionError(message: string, option: string): UsageError {
  const raw = /^-[a-zA-Z]*r|^--raw-output$/.test(option);
  return new UsageError(message, {
    code: 'invalid_jq',
    hint: raw
      ? '--jq already prints strings without quotes, one result a line (as jq -r does): give the expression alone, e.g. --jq ".name"'
      : '--jq takes the expression alone (strings print without quotes, each result on a line, compact when piped): e.g. --jq ".name"; for more of jq, pipe --json to jq itself',
  });
}

export async function loadJq(expression: string): Promise<JqFilter> {
  const tooBig = (what: string, most: number, bigger: string) =>
    new UsageError(`--jq: the expression ${what}; at most ${most}`, {
      code: 'invalid_jq',
      hint: `for a ${bigger} program, pipe the --json output to jq itself`,
    });
  const length = expression.length > JQ_MAX_CHARACTERS ? [...expression].length : expression.length;
  if (length > JQ_MAX_CHARACTERS) throw tooBig(`is ${length} characters`, JQ_MAX_CHARACTERS, 'longer');
  const depth = nesting(expression);
  if (depth > JQ_MAX_NESTING) throw tooBig(`nests brackets ${depth} deep`, JQ_MAX_NESTING, 'deeper');
  // jq-web is CommonJS whose export is a promise: required as such (an ESM import would wrap it).
  const { createRequire } = await import('node:module');
  const jq = await (createRequire(import.meta.url)('jq-web') as Promise<JqWeb>);
  try {
    compiles(jq, expression);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // Exit 3 is jq's "does not compile"; none is the engine crashing (its stack overflowed).
    const { exitCode } = error as JqFailure;
    if (exitCode === 3 || exitCode === undefined) {
      const said = `${jqMessage(error as JqFailure)}${exitCode === 3 ? '' : '; is it nested too deeply?'}`;
      throw new UsageError(`--jq: ${said}`, {
        code: 'invalid_jq',
        hint: 'check the expression (jq 1.7 syntax), e.g. --jq ".name"',
      });
    }
  }
  return {
    apply(json, compact, streamed = false) {
      try {
        const written: string[] = [];
        const run = () => quietly(() => jq.raw(json, asProgram(expression), compact ? ['-r', '-c'] : ['-r']), written);
        // A stream's results (a batch's lines) keep the handlers: a signal in one of its runs would kill the process
        // with nothing said, or be lost as they are put back (the batch ran on). `empty` comes back as undefined.
        const result = (streamed ? run() : signalsKill(run)) ?? '';
        // A filter failing on an input but the last: jq-web ends with 0 (jq exits 5) and console.warn's it.
        const failed = written.join('').match(/jq: error[^\n]*/);
        if (failed) throw Object.assign(new Error(failed[0]), { exitCode: 5, stderr: failed[0] });
        // jq ends each output with a newline; jq-web hands them back without the last one.
        return result === '' || result.endsWith('\n') ? result : `${result}\n`;
      } catch (error) {
        throw new CliError(`--jq: ${jqMessage(error as JqFailure)}`, ExitCode.error, { code: 'jq_error' });
      }
    },
  };
}

/**
 * Throws jq's failure when `expression` does not compile, never running it (`repeat(.)` spins deaf to signals):
 * `empty | (EXPR\n)` never runs (the newline ends a trailing comment). Only if that fails is EXPR given alone, for
 * jq's own message (it fails too, or `import`/`include` find no module); a leading `module` would run: refused.
 */
function compiles(jq: JqWeb, expression: string): void {
  try {
    quietly(() => jq.raw('null', `empty | (${expression}\n)`, ['-n']));
  } catch (error) {
    if ((error as JqFailure).exitCode !== 3) throw error;
    if (/unexpected module\b/.test(jqMessage(error as JqFailure)))
      throw new UsageError('--jq: a `module` directive is not supported (jq-web has no modules)', {
        code: 'invalid_jq',
        hint: 'leave the module line out',
      });
    quietly(() => jq.raw('null', asProgram(expression), ['-n']));
  }
}

/** jq reads a word that starts with `-` as its option, even the program's (`-length`): a space first. */
const asProgram = (expression: string): string => (expression.startsWith('-') ? ` ${expression}` : expression);

/** jq runs synchronously, deaf to our handlers: set aside, a filter that never ends dies of the signal (130, 143). */
function signalsKill<T>(work: () => T): T {
  const saved = (['SIGINT', 'SIGTERM'] as const).map((signal) => [signal, process.listeners(signal)] as const);
  for (const [signal] of saved) process.removeAllListeners(signal);
  try {
    return work();
  } finally {
    for (const [signal, listeners] of saved) for (const listener of listeners) process.on(signal, listener);
  }
}

/** stderr and console.warn muted (kept in `said`): a crashing jq-web's `Aborted()` would break --json's stderr. */
function quietly<T>(work: () => T, said?: string[]): T {
  const write = process.stderr.write;
  const warn = console.warn;
  process.stderr.write = ((chunk: unknown) => {
    said?.push(String(chunk));
    return true;
  }) as typeof write;
  console.warn = (...args: unknown[]) => void said?.push(args.map(String).join(' '));
  try {
    return work();
  } finally {
    process.stderr.write = write;
    console.warn = warn;
  }
}

export const SECRET_LEFT_OUT = 'the secret (.key) is shown only now, and the --jq filter left it out: it is lost';

/** Whether the --jq filter's output of `answer` holds the secret (jq-web is loaded already: the output went through it). */
export async function jqShows(expression: string, answer: unknown, secret: string): Promise<boolean> {
  return loadJq(expression)
    .then((jq) => jq.apply(JSON.stringify(answer), true).includes(secret))
    .catch(() => false);
}

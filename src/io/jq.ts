import { CliError, ExitCode, UsageError } from '../errors.js';

/**
 * `--jq EXPR`: the command's JSON output run through jq 1.7 compiled to WebAssembly (jq-web), loaded only
 * when the flag is given. Strings come out raw, as with gh's --jq. A filter that does not compile is a
 * usage error before anything is sent.
 */
export interface JqFilter {
  /** `compact` for NDJSON lines. */
  apply(json: string, compact: boolean): string;
}

interface JqWeb {
  raw(input: string, filter: string, flags?: string[]): string | undefined;
}

interface JqFailure {
  exitCode?: number;
  stderr?: string;
  message?: string;
}

/** jq's own message, without its `jq: error:` prefix and the compile-summary line. */
function jqMessage(error: JqFailure): string {
  const text = (error.stderr ?? error.message ?? 'jq failed').replace(/^undefined/, '');
  const lines = text
    .split('\n')
    .map((line) => line.replace(/^jq: (error: )?/, '').trim())
    .filter((line) => line !== '' && !/^\d+ compile errors?$/.test(line) && !/^Non-zero exit code/.test(line));
  // A crashing engine (no exit code) ends its message with a hint for jq-web's own developers.
  return (lines.join('; ').replace(/:; /g, ': ') || 'jq failed').replace(ENGINE_HINT, '');
}

const ENGINE_HINT = /\.? ?Build with -sASSERTIONS for more info\.?$/;

/**
 * The longest --jq expression, in characters. jq-web runs synchronously (a signal cannot stop it), and
 * compiling some long expressions never ends: about 28,000 `.|` spun at 100% CPU, deaf to Ctrl-C and
 * SIGTERM. Up to this length every shape tried compiled or failed within half a second.
 */
export const JQ_MAX_CHARACTERS = 8192;

/**
 * The deepest bracket nesting (`(`, `[`, `{`, string interpolation) a --jq expression may have: jq-web
 * compiles deeper nesting but its engine crashes when running it (512 `[` on null: `Aborted()`).
 */
export const JQ_MAX_NESTING = 256;

/** How deep the expression's brackets nest, outside string literals and comments. */
function nesting(expression: string): number {
  let depth = 0;
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
    depth = open.length;
    deepest = Math.max(deepest, depth);
  }
  return deepest;
}

export async function loadJq(expression: string): Promise<JqFilter> {
  // Counted in code points only when the UTF-16 length is over the limit (cheap for a huge argument).
  const length = expression.length > JQ_MAX_CHARACTERS ? [...expression].length : expression.length;
  if (length > JQ_MAX_CHARACTERS) {
    throw new UsageError(`--jq: the expression is ${length} characters; at most ${JQ_MAX_CHARACTERS}`, {
      code: 'invalid_jq',
      hint: 'for a longer program, pipe the --json output to jq itself',
    });
  }
  const depth = nesting(expression);
  if (depth > JQ_MAX_NESTING)
    throw new UsageError(`--jq: the expression nests brackets ${depth} deep; at most ${JQ_MAX_NESTING}`, {
      code: 'invalid_jq',
      hint: 'for a deeper program, pipe the --json output to jq itself',
    });
  // jq-web is CommonJS whose export is a promise: required as such (an ESM import would wrap it).
  const { createRequire } = await import('node:module');
  const jq = await (createRequire(import.meta.url)('jq-web') as Promise<JqWeb>);
  try {
    compiles(jq, expression);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // Exit 3 is jq's "does not compile"; no exit code at all is the WebAssembly engine crashing (deep
    // nesting such as 512 `[`, within the length limit, overflows its stack), after which it runs
    // nothing more.
    const { exitCode } = error as JqFailure;
    if (exitCode === 3 || exitCode === undefined) {
      const message = jqMessage(error as JqFailure);
      const said =
        exitCode === 3 ? message : `jq's engine failed on this expression (${message}); is it nested too deeply?`;
      throw new UsageError(`--jq: ${said}`, {
        code: 'invalid_jq',
        hint: 'check the expression (jq 1.7 syntax), e.g. --jq ".name"',
      });
    }
  }
  return {
    apply(json, compact) {
      try {
        // No output at all (`empty`) comes back as undefined.
        const result =
          signalsKill(() => quietly(() => jq.raw(json, expression, compact ? ['-r', '-c'] : ['-r']))) ?? '';
        // jq ends each output with a newline; jq-web hands them back without the last one.
        return result === '' || result.endsWith('\n') ? result : `${result}\n`;
      } catch (error) {
        // No exit code: the engine itself crashed on the answer (it runs nothing more).
        const message = jqMessage(error as JqFailure);
        const said =
          (error as JqFailure).exitCode === undefined ? `jq's engine failed on this expression (${message})` : message;
        throw new CliError(`--jq: ${said}`, ExitCode.error, { code: 'jq_error' });
      }
    },
  };
}

/**
 * Throws jq's failure when `expression` does not compile, without ever running it: a filter that never
 * ends (`def f: f; f`, `repeat(.)`) would spin forever here, deaf to Ctrl-C and SIGTERM. The check is
 * `empty | (EXPR\n)`, which jq compiles but never evaluates (the newline ends a trailing comment). Only
 * when that fails is the expression itself given to jq, for jq's own message and position: it fails to
 * compile too (an empty program or one of only `def`s included), or it starts with `import`/`include`,
 * which cannot go in parentheses (jq-web finds no module: a compile error). A leading `module` directive
 * would compile and run alone, so it is refused.
 */
function compiles(jq: JqWeb, expression: string): void {
  try {
    quietly(() => jq.raw('null', `empty | (${expression}\n)`, ['-n']));
  } catch (error) {
    if ((error as JqFailure).exitCode !== 3) throw error;
    // `module {…}; BODY` compiles on its own and would run BODY: refused unrun.
    if (/unexpected module\b/.test(jqMessage(error as JqFailure)))
      throw new UsageError('--jq: a `module` directive is not supported (jq-web has no modules)', {
        code: 'invalid_jq',
        hint: 'leave the module line out',
      });
    quietly(() => jq.raw('null', expression, ['-n']));
  }
}

/**
 * Runs `work` (jq on the answer, synchronous: the event loop cannot see a signal meanwhile) with the
 * process's SIGINT and SIGTERM handlers set aside, so a filter that never ends on the answer (it hangs,
 * as jq itself would) is still ended by Ctrl-C or SIGTERM: the signal's default action ends the process,
 * which the shell reports as 130 or 143. The handlers are back as soon as jq returns.
 */
function signalsKill<T>(work: () => T): T {
  const saved = (['SIGINT', 'SIGTERM'] as const).map((signal) => [signal, process.listeners(signal)] as const);
  for (const [signal] of saved) process.removeAllListeners(signal);
  try {
    return work();
  } finally {
    for (const [signal, listeners] of saved) for (const listener of listeners) process.on(signal, listener);
  }
}

/**
 * Runs `work` with the process's stderr muted: a crashing jq-web prints `Aborted()` there itself
 * (console.error, bound when it loaded), which would break the one-JSON-document stderr of --json;
 * the error it throws says the same. jq.raw is synchronous, so nothing else writes meanwhile.
 */
function quietly<T>(work: () => T): T {
  const write = process.stderr.write;
  process.stderr.write = (() => true) as typeof write;
  try {
    return work();
  } finally {
    process.stderr.write = write;
  }
}

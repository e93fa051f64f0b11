import { CliError, ExitCode, UsageError } from '../errors.js';

/**
 * `--jq EXPR`: the command's JSON output run through jq itself (jq 1.7 compiled to WebAssembly, the
 * jq-web package), loaded only when the flag is given. Strings come out raw, as with gh's --jq.
 * A filter that does not compile is a usage error before anything is sent.
 */
export interface JqFilter {
  /** The filter's output for one JSON document (`compact` for NDJSON lines). */
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
  return lines.join('; ').replace(/:; /g, ': ') || 'jq failed';
}

/**
 * The longest --jq expression, in characters. jq-web runs synchronously (a signal cannot stop it), and
 * compiling some long expressions never ends: about 28,000 `.|` spun at 100% CPU, deaf to Ctrl-C and
 * SIGTERM. Up to this length every shape tried (`.|` chains, `(((…)))`, `[[[…]]]`, objects, strings,
 * defs, interpolation) compiled or failed within half a second; `[[[…]]]` twice as long took seconds.
 */
export const JQ_MAX_CHARACTERS = 8192;

/** The --jq expression refused unseen when it is longer than JQ_MAX_CHARACTERS: exit 2, nothing sent. */
function checkLength(expression: string): void {
  // Counted in code points only when the UTF-16 length is over the limit (cheap for a huge argument).
  const length = expression.length > JQ_MAX_CHARACTERS ? [...expression].length : expression.length;
  if (length <= JQ_MAX_CHARACTERS) return;
  throw new UsageError(`--jq: the expression is ${length} characters; at most ${JQ_MAX_CHARACTERS}`, {
    code: 'invalid_jq',
    hint: 'for a longer program, pipe the --json output to jq itself',
  });
}

export async function loadJq(expression: string): Promise<JqFilter> {
  checkLength(expression);
  // jq-web is CommonJS whose export is a promise: required as such (an ESM import would wrap it).
  const { createRequire } = await import('node:module');
  const jq = await (createRequire(import.meta.url)('jq-web') as Promise<JqWeb>);
  try {
    quietly(() => jq.raw('null', expression, ['-r']));
  } catch (error) {
    // Exit 3 is jq's "does not compile"; no exit code at all is the WebAssembly engine crashing (deep
    // nesting such as 512 `[`, within the length limit, overflows its stack), after which it runs
    // nothing more. Any other exit is a runtime error on null, which says nothing.
    const { exitCode } = error as JqFailure;
    if (exitCode === 3 || exitCode === undefined) {
      const message = jqMessage(error as JqFailure).replace(/\.? ?Build with -sASSERTIONS for more info\.?$/, '');
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
        const result = jq.raw(json, expression, compact ? ['-r', '-c'] : ['-r']) ?? '';
        // jq ends each output with a newline; jq-web hands them back without the last one.
        return result === '' || result.endsWith('\n') ? result : `${result}\n`;
      } catch (error) {
        throw new CliError(`--jq: ${jqMessage(error as JqFailure)}`, ExitCode.error, { code: 'jq_error' });
      }
    },
  };
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

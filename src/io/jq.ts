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

export async function loadJq(expression: string): Promise<JqFilter> {
  // jq-web is CommonJS whose export is a promise: required as such (an ESM import would wrap it).
  const { createRequire } = await import('node:module');
  const jq = await (createRequire(import.meta.url)('jq-web') as Promise<JqWeb>);
  try {
    jq.raw('null', expression, ['-r']);
  } catch (error) {
    // Exit 3 is jq's "does not compile"; anything else is a runtime error on null, which says nothing.
    if ((error as JqFailure).exitCode === 3) {
      throw new UsageError(`--jq: ${jqMessage(error as JqFailure)}`, {
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

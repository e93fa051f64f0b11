import { UsageError } from '../errors.js';
import { checkDocument, type DocumentBody, type DocumentDefaults, FIELDS_NOTE, fillDefaults } from './documents.js';
import { type Fingerprint, fingerprint, sameAsFingerprint } from './fingerprint.js';
import { atLine, describeJsonValue, isPlainObject, tryParseJson } from './json.js';
import { readLines } from './lines.js';
import { type InputSource, noDocuments, problemsMessage } from './source.js';

/**
 * The lines of an NDJSON batch, each checked; a bad line is a value (`error`), for --continue-on-error. A
 * file is read twice so memory stays flat: a pass checks every line (one bad: nothing is sent), the second
 * yields them, proved the same bytes (fingerprint.ts); up to KEEP_BYTES is kept from the first instead.
 */

export type NdjsonLine =
  | { line: number; error: string }
  | {
      line: number;
      error?: undefined;
      /**
       * Checked by a rule stricter than the contract's: the client does not check it again. Kept though only
       * `body` is sent: a file's lines held without it peaked 60 MB lower and sent 5% slower (docs/performance.md).
       */
      document: DocumentBody;
      /** The line's own bytes when they can be sent as they are, else the document's JSON. */
      body: Buffer | string;
      /** What the line is known by across runs of its batch (src/state/line-keys.ts), once computed. */
      key?: { hash: string; n: number };
    };

/** Sees each valid line of a file's check pass, its body made (a line kept for sending is the same object). */
export type CheckWatcher = (line: NdjsonLine & { error?: undefined }) => void;

/** `total`: the number of documents, when the input was read through first (a file). */
export type BatchLines = { total: number | undefined; lines: AsyncIterable<NdjsonLine> };

const KEEP_BYTES = 16 * 1024 * 1024;

/** Why an input whose lines were refused before any was sent may be one text document instead. */
export const readAsNdjson = (name: string, detected: boolean): string =>
  `${name} was read as NDJSON, one document a line${detected ? ', as its first line is a JSON object' : ' (--format ndjson)'}` +
  ': if it is one text document, pass --format text';

/** `detected`: read as NDJSON for its first line (no --format, no .ndjson name). */
export type BatchOptions = {
  /** The flags that complete a JSON document or an NDJSON line. */
  defaults: DocumentDefaults;
  continueOnError: boolean;
  detected: boolean;
  /** The command line that sends a JSON array made NDJSON by `jq -c FILTER` (the program, unquoted) as a batch. */
  batchHint?: ((filter: string | undefined) => string) | undefined;
};

/** The lines to send of an NDJSON source whose first read is `chunks` (it may replay what detection peeked at). */
export async function readBatchLines(
  source: InputSource,
  chunks: AsyncIterable<Buffer>,
  options: BatchOptions,
  watch?: CheckWatcher,
): Promise<BatchLines> {
  const { defaults, continueOnError, batchHint } = options;
  if (!source.reopenable) {
    return { total: undefined, lines: readNdjsonDocuments(chunks, source.name, defaults, false, batchHint) };
  }
  const kept: NdjsonLine[] | undefined = source.size !== undefined && source.size <= KEEP_BYTES ? [] : undefined;
  const first: Fingerprint = { blocks: [], size: 0 };
  let count = 0;
  let bad = 0;
  const problems: string[] = [];
  // A line not kept is only counted and checked here (unless watched): its body is made on the second pass.
  const checked = kept ? chunks : fingerprint(chunks, first);
  for await (const line of readNdjsonDocuments(checked, source.name, defaults, !kept && !watch, batchHint)) {
    count++;
    kept?.push(line);
    if (line.error === undefined) {
      watch?.(line);
      continue;
    }
    bad++;
    if (problems.length < 10) problems.push(atLine(line.line, line.error));
  }
  if (count === 0) throw noDocuments(`${source.name} holds no documents (only blank lines)`);
  if (bad > 0 && !continueOnError) {
    throw new UsageError(problemsMessage(source.name, problems, bad, `${bad} of ${count} lines are invalid`), {
      code: 'invalid_input',
      // Every line refused: --continue-on-error would send none (a text read as NDJSON, when detected).
      hint:
        (options.detected
          ? `nothing was sent. ${readAsNdjson(source.name, true)}; if it is a batch, `
          : 'nothing was sent; ') +
        `fix the lines${bad < count ? ', or pass --continue-on-error to send the valid ones' : ''}`,
    });
  }
  if (kept) return { total: count, lines: fromMemory(kept) };
  const again = sameAsFingerprint(source.open(), first, source.name, source.currentSize);
  return { total: count, lines: readNdjsonDocuments(again, source.name, defaults) };
}

async function* fromMemory(lines: NdjsonLine[]): AsyncGenerator<NdjsonLine> {
  // Each line is let go once it is taken, so the memory is returned as the batch goes.
  lines.reverse();
  while (lines.length > 0) yield lines.pop() as NdjsonLine;
}

/**
 * Blank lines are skipped; `checkOnly`: lines counted and let go, their body not made. A first line (blank ones
 * aside) that opens a JSON array refuses the input, with `batchHint`'s conversion (as a JSON array given as one
 * document).
 */
export async function* readNdjsonDocuments(
  chunks: AsyncIterable<Buffer>,
  sourceName: string,
  defaults: DocumentDefaults,
  checkOnly = false,
  batchHint?: (filter: string | undefined) => string,
): AsyncGenerator<NdjsonLine> {
  /** Before the first line that is not blank (`echo; jq . docs.json`): the one that may open a JSON array. */
  let first = true;
  for await (const { number: line, text, bytes, error } of readLines(chunks, sourceName)) {
    if (error) {
      yield { line, error: error.message.replace(/^.*?: line \d+: /, '') };
      continue;
    }
    // Decoding drops a byte order mark at the start of any line; only the input's own first one is allowed.
    const bom = bytes !== undefined && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
    if (line > 1 && bom) {
      yield { line, error: BOM_INSIDE };
      continue;
    }
    if (text.trim() === '') continue;
    const parsed = tryParseJson(text);
    if (first && !(parsed.ok && isPlainObject(parsed.value)) && text.trimStart().startsWith('[')) {
      throw new UsageError(
        `${sourceName}: line ${line} opens a JSON array: documents in NDJSON are one JSON object a line`,
        {
          code: 'invalid_input',
          hint: batchHint && `send them as a batch: ${batchHint('.[]')}`,
        },
      );
    }
    first = false;
    if (!parsed.ok) yield { line, error: `column ${parsed.column}: invalid JSON: ${parsed.reason}` };
    else if (!isPlainObject(parsed.value)) {
      yield { line, error: `expected a JSON object (${FIELDS_NOTE}), found ${describeJsonValue(parsed.value)}` };
    } else {
      const filled = fillDefaults(parsed.value, defaults);
      const document = checkDocument(filled);
      if (typeof document === 'string') yield { line, error: document };
      else if (checkOnly) yield { line, document, body: '' };
      else {
        // The line's bytes are the body when the service parses them into the very object checked: the
        // flags completed nothing (no perspective was null) and no byte order mark (which JSON refuses).
        const asRead =
          !bom &&
          parsed.value.alias === filled.alias &&
          parsed.value.label === filled.label &&
          parsed.value.perspective === filled.perspective;
        yield { line, document, body: bytes !== undefined && asRead ? bytes : JSON.stringify(document) };
      }
    }
  }
}

const BOM_INSIDE =
  'starts with a UTF-8 byte order mark: one is allowed only at the start of the input (an input joined from several files?)';

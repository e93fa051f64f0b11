import { UsageError } from '../errors.js';
import { checkDocument, type DocumentBody, type DocumentDefaults, FIELDS_NOTE, fillDefaults } from './documents.js';
import { type Fingerprint, fingerprint, sameAsFingerprint } from './fingerprint.js';
import { describeJsonValue, isPlainObject, tryParseJson } from './json.js';
import { readLines } from './lines.js';
import type { InputSource } from './source.js';

/**
 * The lines of an NDJSON batch, each a prepared body: checked against the request contract, and the
 * exact bytes or text to send (so a batch hashes what it sends). A bad line is a value (`error`), so a
 * batch can report it and go on (--continue-on-error).
 *
 * A file is read twice, streaming both times so memory stays flat whatever its size: the first pass
 * checks every line and counts them, so a bad line means nothing is sent; the second pass yields them
 * to send, proved the same bytes as the first read (src/input/fingerprint.ts). A file of up to
 * KEEP_BYTES is kept in memory from the first pass instead. Standard input cannot be read twice: its
 * lines are checked as they are yielded.
 */

export type NdjsonLine =
  | { line: number; error: string }
  | {
      line: number;
      error?: undefined;
      /** The document as checked against the contract (what the client checks again). */
      document: DocumentBody;
      /**
       * The request body: the line's own bytes when they can be sent as they are (see sendsAsRead),
       * else the checked document serialized once, as the client would (a batch hashes what it sends).
       */
      body: Buffer | string;
      /** What the line is known by across runs of its batch (src/state/line-keys.ts), once it is computed. */
      key?: { hash: string; n: number };
    };

/** Sees each valid line of a file's check pass, its body made (a line kept for sending is the same object). */
export type CheckWatcher = (line: NdjsonLine & { error?: undefined }) => void;

interface CheckOptions {
  /** Only check (a pass whose lines are counted and let go): the body is left empty, not made. */
  checkOnly?: boolean;
}

export interface BatchLines {
  /** The number of documents, when the input was read through first (a file). */
  total: number | undefined;
  lines: AsyncIterable<NdjsonLine>;
}

/** A file up to this size is kept in memory between the two passes, so it is read and parsed once. */
const KEEP_BYTES = 16 * 1024 * 1024;
const MAX_LISTED = 10;

/**
 * The lines to send of an NDJSON source whose first read is `chunks` (it may replay what detection
 * peeked at). For a file, every line is checked first: bad lines are a UsageError listing them, unless
 * `continueOnError` (then they are yielded with their error).
 */
export async function readBatchLines(
  source: InputSource,
  chunks: AsyncIterable<Buffer>,
  defaults: DocumentDefaults,
  continueOnError: boolean,
  watch?: CheckWatcher,
): Promise<BatchLines> {
  if (!source.reopenable) return { total: undefined, lines: readNdjsonDocuments(chunks, source.name, defaults) };
  const kept: NdjsonLine[] | undefined = source.size !== undefined && source.size <= KEEP_BYTES ? [] : undefined;
  const first: Fingerprint = { blocks: [], size: 0 };
  let count = 0;
  let bad = 0;
  const problems: string[] = [];
  // A line not kept is only counted and checked here (unless watched): its body is made on the second pass.
  const checking = kept
    ? readNdjsonDocuments(chunks, source.name, defaults)
    : readNdjsonDocuments(fingerprint(chunks, first), source.name, defaults, { checkOnly: watch === undefined });
  for await (const line of checking) {
    count++;
    kept?.push(line);
    if (line.error === undefined) {
      watch?.(line);
      continue;
    }
    bad++;
    if (problems.length < MAX_LISTED) problems.push(`line ${line.line}: ${line.error}`);
  }
  if (count === 0) throw new UsageError(`${source.name} holds no documents (only blank lines)`);
  if (bad > 0 && !continueOnError) {
    const more = bad > problems.length ? [`... and ${bad - problems.length} more`] : [];
    const message =
      bad === 1
        ? `${source.name}: ${problems[0]}`
        : `${source.name}: ${bad} of ${count} lines are invalid:\n${[...problems, ...more].map((p) => `  ${p}`).join('\n')}`;
    throw new UsageError(message, {
      code: 'invalid_input',
      hint: 'nothing was sent; fix the lines, or pass --continue-on-error to send the valid ones',
    });
  }
  const lines = kept
    ? fromMemory(kept)
    : readNdjsonDocuments(
        sameAsFingerprint(source.open(), first, source.name, () => source.currentSize?.()),
        source.name,
        defaults,
      );
  return { total: count, lines };
}

async function* fromMemory(lines: NdjsonLine[]): AsyncGenerator<NdjsonLine> {
  // Each line is let go once it is taken, so the memory is returned as the batch goes.
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as NdjsonLine;
    lines[i] = undefined as unknown as NdjsonLine;
    yield line;
  }
}

/** Streams the documents of an NDJSON source, each checked; blank lines are skipped, bad lines carry their error. */
export async function* readNdjsonDocuments(
  chunks: AsyncIterable<Buffer>,
  sourceName: string,
  defaults: DocumentDefaults,
  options: CheckOptions = {},
): AsyncGenerator<NdjsonLine> {
  for await (const { number, text, bytes, error } of readLines(chunks, sourceName)) {
    if (error) {
      yield { line: number, error: error.message.replace(/^.*?: line \d+: /, '') };
      continue;
    }
    // Decoding drops a byte order mark at the start of any line; only the input's own first one is allowed.
    if (number > 1 && bytes !== undefined && startsWithBom(bytes)) {
      yield { line: number, error: BOM_INSIDE };
      continue;
    }
    if (text.trim() === '') continue;
    yield checkNdjsonLine(number, text, bytes, defaults, options);
  }
}

/** Checks one non-blank NDJSON line (its text, and its bytes when they may be sent as they are). */
export function checkNdjsonLine(
  line: number,
  text: string,
  bytes: Buffer | undefined,
  defaults: DocumentDefaults,
  options: CheckOptions = {},
): NdjsonLine {
  const parsed = tryParseJson(text, line);
  if (!parsed.ok) return { line, error: `column ${parsed.column}: invalid JSON: ${parsed.reason}` };
  if (!isPlainObject(parsed.value)) {
    return { line, error: `expected a JSON object (${FIELDS_NOTE}), found ${describeJsonValue(parsed.value)}` };
  }
  const filled = fillDefaults(parsed.value, defaults);
  const checked = checkDocument(filled);
  if (!checked.ok) return { line, error: checked.problem };
  if (options.checkOnly) return { line, document: checked.document, body: '' };
  const body =
    bytes !== undefined && sendsAsRead(parsed.value, filled, bytes) ? bytes : JSON.stringify(checked.document);
  return { line, document: checked.document, body };
}

/**
 * Whether a checked line's bytes can be the request body as they are: the service parses them into the
 * very object that was checked, so nothing is gained by serializing it again. That holds when the flags
 * completed nothing (every field is the line's own, and no perspective is null) and the line does not
 * start with a byte order mark (which the line's decoding dropped, and JSON does not allow). A name
 * given twice in a line is read as its last value, by JSON.parse here as by the service.
 */
function sendsAsRead(object: Record<string, unknown>, filled: DocumentBody, bytes: Buffer): boolean {
  if (startsWithBom(bytes)) return false;
  return object.alias === filled.alias && object.label === filled.label && object.perspective === filled.perspective;
}

const BOM_INSIDE =
  'starts with a UTF-8 byte order mark: one is allowed only at the start of the input (an input joined from several files?)';

function startsWithBom(bytes: Buffer): boolean {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

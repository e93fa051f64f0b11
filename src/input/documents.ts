import { capYoungGeneration } from '../api/young-generation.js';
import * as z from 'zod';
import { perspective } from '../contract/common.js';
import type { DocumentCreateRequest } from '../contract/documents.js';
import { UsageError } from '../errors.js';
import { formatIssue } from './issues.js';
import { describeJsonValue, isPlainObject, parseJsonObject, tryParseJson } from './json.js';
import { readLines } from './lines.js';
import { readChunksText } from './source.js';
import { decodeUtf8 } from './utf8.js';

/**
 * The three kinds of `docs submit` input: plain text (flags give the rest), one JSON document
 * `{alias, content, label, perspective}`, or NDJSON with one such document per line. Flags fill the
 * fields a JSON document leaves out.
 */

export type DocumentFormat = 'text' | 'json' | 'ndjson';
export type DocumentBody = DocumentCreateRequest;

export interface DocumentDefaults {
  alias?: string | undefined;
  label?: string | undefined;
  perspective?: DocumentCreateRequest['perspective'] | undefined;
}

const FIELDS_NOTE = 'a document is {"alias", "content", "label", "perspective"}';

/**
 * What `docs submit` checks in a document before sending it: alias, label and a non-empty content
 * present (a document without them cannot be filed), perspective one of the seed's two when given,
 * no unknown field. The alias grammar and the label's length are the service's to check, and no
 * perspective is filled in: the seed leaves that endpoint's default "not shown".
 */
const documentInput = z.strictObject({
  alias: z.string().min(1, { error: 'must not be empty' }),
  content: z.string().min(1, { error: 'must not be empty' }),
  label: z.string().min(1, { error: 'must not be empty' }),
  perspective: perspective.optional(),
});

/**
 * Detects the kind from the first bytes, reading no more than it must: text when the first non-space
 * character is not `{`; NDJSON when the first line alone is a JSON object and another line follows; else
 * one JSON document (possibly pretty-printed, parsed whole later). Returns the chunks to read from,
 * which replay what was peeked.
 */
export async function detectDocumentFormat(
  chunks: AsyncIterable<Buffer>,
  sourceName: string,
): Promise<{ format: DocumentFormat; chunks: AsyncIterable<Buffer> }> {
  const peek = new PeekedChunks(chunks);
  let first = await peek.find(0, isNonSpace);
  // A byte order mark (as some editors save UTF-8) is not the content: look past it.
  if (first === 0 && (await peek.find(2, () => true)) === 2 && isByteOrderMark(peek)) {
    first = await peek.find(3, isNonSpace);
  }
  if (first === -1 || peek.byteAt(first) !== 0x7b) return { format: 'text', chunks: peek.replay() };
  const lineEnd = await peek.find(first, (b) => b === 0x0a);
  if (lineEnd === -1) return { format: 'json', chunks: peek.replay() };
  const firstLine = decodeUtf8(peek.slice(first, lineEnd), sourceName);
  if (!isJsonObject(firstLine)) return { format: 'json', chunks: peek.replay() };
  const next = await peek.find(lineEnd + 1, isNonSpace);
  return { format: next === -1 ? 'json' : 'ndjson', chunks: peek.replay() };
}

/** Reads one whole JSON document and completes it from the flags. */
export async function readJsonDocument(
  chunks: AsyncIterable<Buffer>,
  sourceName: string,
  defaults: DocumentDefaults,
): Promise<DocumentBody> {
  const text = await readChunksText(chunks, sourceName);
  const object = parseJsonObject(text, { source: sourceName }, `a JSON object (${FIELDS_NOTE})`);
  const result = validateDocument(object, defaults);
  if (typeof result === 'string') {
    throw new UsageError(`${sourceName}: ${result}`, { code: 'invalid_input', hint: FIELDS_NOTE });
  }
  return result;
}

/** A plain-text document: the content as given, the rest from the flags. */
export function textDocument(content: string, defaults: DocumentDefaults): DocumentBody | string {
  return validateDocument({ content }, defaults);
}

export interface NdjsonLine {
  line: number;
  /** Why the line cannot be sent; unset for a line that can. */
  error?: string;
  /** The document (checked against the contract). */
  document?: DocumentBody;
  /**
   * The line's object completed from the flags, its fields in the line's own order: what a batch
   * journal of format 1 hashed (see batch-journal.ts). Set with `document`.
   */
  filled?: DocumentBody;
  /**
   * The line's own bytes, set when they can be sent as they are (see sendsAsRead): the request body,
   * with nothing to serialize or encode.
   */
  bytes?: Buffer;
}

/** Streams the documents of an NDJSON source, each checked; blank lines are skipped, bad lines carry their error. */
export async function* readNdjsonDocuments(
  chunks: AsyncIterable<Buffer>,
  sourceName: string,
  defaults: DocumentDefaults,
): AsyncGenerator<NdjsonLine> {
  // A batch is bulk work from its first line on (a file's lines are all checked before any is sent).
  capYoungGeneration().catch(() => undefined);
  for await (const { number, text, bytes, error } of readLines(chunks, sourceName)) {
    if (error) {
      yield { line: number, error: error.message.replace(/^.*?: line \d+: /, '') };
      continue;
    }
    if (text.trim() === '') continue;
    yield checkNdjsonLine(number, text, bytes, defaults);
  }
}

/** Checks one non-blank NDJSON line (its text, and its bytes when they may be sent as they are). */
export function checkNdjsonLine(
  line: number,
  text: string,
  bytes: Buffer | undefined,
  defaults: DocumentDefaults,
): NdjsonLine {
  const parsed = tryParseJson(text, line);
  if (!parsed.ok) return { line, error: `column ${parsed.column}: invalid JSON: ${parsed.reason}` };
  if (!isPlainObject(parsed.value)) {
    return { line, error: `expected a JSON object (${FIELDS_NOTE}), found ${describeJsonValue(parsed.value)}` };
  }
  const filled = fillDefaults(parsed.value, defaults);
  const result = validateFilled(filled);
  if (typeof result === 'string') return { line, error: result };
  return bytes !== undefined && sendsAsRead(parsed.value, filled, bytes)
    ? { line, document: result, filled, bytes }
    : { line, document: result, filled };
}

/**
 * Whether a checked line's bytes can be the request body as they are: the service parses them into the
 * very object that was checked, so nothing is gained by serializing it again. That holds when the flags
 * completed nothing (every field is the line's own, and no perspective is null) and the line does not
 * start with a byte order mark (which the line's decoding dropped, and JSON does not allow). A name
 * given twice in a line is read as its last value, by JSON.parse here as by the service.
 */
function sendsAsRead(object: Record<string, unknown>, filled: DocumentBody, bytes: Buffer): boolean {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return false;
  return object.alias === filled.alias && object.label === filled.label && object.perspective === filled.perspective;
}

/**
 * The request body a checked document is sent as when its line's bytes cannot be: the same text the
 * API client makes of it (JSON.stringify of the contract's output: its field order; no perspective
 * when none was given). A batch serializes such a document once, and hashes and sends that text.
 */
export function documentRequestText(document: DocumentBody): string {
  return JSON.stringify({
    alias: document.alias,
    content: document.content,
    label: document.label,
    perspective: document.perspective,
  });
}

function fillDefaults(object: Record<string, unknown>, defaults: DocumentDefaults): DocumentBody {
  const body = { ...object } as Record<string, unknown>;
  for (const field of ['alias', 'label', 'perspective'] as const) {
    if ((body[field] === undefined || body[field] === null) && defaults[field] !== undefined)
      body[field] = defaults[field];
  }
  if (body.perspective === null) delete body.perspective;
  return body as DocumentBody;
}

/** Fills missing fields from the flags and checks the result against the request contract. */
export function validateDocument(object: Record<string, unknown>, defaults: DocumentDefaults): DocumentBody | string {
  return validateFilled(fillDefaults(object, defaults));
}

/** Checks a document already completed from the flags against the request contract. */
function validateFilled(merged: DocumentBody): DocumentBody | string {
  const parsed = documentInput.safeParse(merged);
  if (parsed.success) {
    const body: DocumentBody = { alias: parsed.data.alias, content: parsed.data.content, label: parsed.data.label };
    if (merged.perspective !== undefined) body.perspective = parsed.data.perspective;
    return body;
  }
  return parsed.error.issues
    .map((issue) => {
      const text = formatIssue(issue);
      const field = issue.path[0];
      if (text.endsWith(': required') && (field === 'alias' || field === 'label')) {
        return `${text} (give it in the JSON or with --${field})`;
      }
      if (issue.code === 'unrecognized_keys') return `${text} (${FIELDS_NOTE})`;
      return text;
    })
    .join('; ');
}

function isJsonObject(text: string): boolean {
  try {
    return isPlainObject(JSON.parse(text));
  } catch {
    return false;
  }
}

function isByteOrderMark(peek: PeekedChunks): boolean {
  return peek.byteAt(0) === 0xef && peek.byteAt(1) === 0xbb && peek.byteAt(2) === 0xbf;
}

function isNonSpace(b: number): boolean {
  return b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d;
}

/**
 * Chunks read ahead for detection, replayed in front of the rest of the stream. Searches scan each
 * chunk once, so a long first line costs no repeated copying.
 */
class PeekedChunks {
  private readonly iterator: AsyncIterator<Buffer>;
  private readonly chunks: Buffer[] = [];
  private length = 0;

  constructor(source: AsyncIterable<Buffer>) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /** Offset of the first byte at or after `from` that matches, reading more as needed; -1 at the end. */
  async find(from: number, match: (byte: number) => boolean): Promise<number> {
    let base = 0;
    let index = 0;
    for (;;) {
      for (; index < this.chunks.length; index++) {
        const chunk = this.chunks[index] as Buffer;
        for (let i = Math.max(0, from - base); i < chunk.length; i++) if (match(chunk[i] as number)) return base + i;
        base += chunk.length;
      }
      const next = await this.iterator.next();
      if (next.done) return -1;
      this.chunks.push(next.value);
      this.length += next.value.length;
    }
  }

  byteAt(offset: number): number | undefined {
    let base = 0;
    for (const chunk of this.chunks) {
      if (offset < base + chunk.length) return chunk[offset - base];
      base += chunk.length;
    }
    return undefined;
  }

  slice(start: number, end: number): Buffer {
    return Buffer.concat(this.chunks, this.length).subarray(start, end);
  }

  async *replay(): AsyncGenerator<Buffer> {
    while (this.chunks.length > 0) yield this.chunks.shift() as Buffer;
    for (;;) {
      const next = await this.iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
}

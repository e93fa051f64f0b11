import * as z from 'zod/mini';
import { perspective } from '../contract/common.js';
import type { DocumentCreateRequest } from '../contract/documents.js';
import { UsageError } from '../errors.js';
import { isPlainObject, parseJsonObject, tryParseJson, UNEXPECTED_AFTER_VALUE } from './json.js';
import { blankError, readChunksText } from './source.js';
import { decodeUtf8 } from './utf8.js';

export type DocumentFormat = 'text' | 'json' | 'ndjson';
export type DocumentBody = DocumentCreateRequest;

export type DocumentDefaults = Pick<DocumentBody, 'alias' | 'label' | 'perspective'>;

export const FIELDS_NOTE = 'a document is {"alias", "content", "label", "perspective"}';
const TEXT_HINT = 'it was read as one JSON document, being a JSON object: if it is a text document, pass --format text';

/**
 * What `docs submit` checks before sending. The alias grammar and the label's length are the service's to
 * check; no perspective is filled in (the seed leaves that endpoint's default "not shown").
 */
const documentInput = z.strictObject({
  alias: z.string().check(z.minLength(1, { error: 'must not be empty' })),
  content: z.string().check(z.minLength(1, { error: 'must not be empty' })),
  label: z.string().check(z.minLength(1, { error: 'must not be empty' })),
  perspective: z.optional(perspective),
});

/**
 * From the first bytes, reading no more than it must: text unless it starts with `{` (or a `[` of objects);
 * NDJSON when the first line alone is a JSON object and another follows. The chunks replay what was peeked.
 */
export async function detectDocumentFormat(
  chunks: AsyncIterable<Buffer>,
  sourceName: string,
): Promise<{ format: DocumentFormat; chunks: AsyncIterable<Buffer> }> {
  const peek = new PeekedChunks(chunks);
  let first = await peek.find(0, isNonSpace);
  // A byte order mark (as some editors save UTF-8) is not the content: look past it.
  const bom = () => peek.byteAt(0) === 0xef && peek.byteAt(1) === 0xbb && peek.byteAt(2) === 0xbf;
  if (first === 0 && (await peek.find(2, () => true)) === 2 && bom()) first = await peek.find(3, isNonSpace);
  // `[{...}, ...]` is a JSON array of documents, never a text (readJsonDocument says how to send it).
  if (first !== -1 && peek.byteAt(first) === 0x5b) {
    const second = await peek.find(first + 1, isNonSpace);
    const opening = second === -1 ? undefined : peek.byteAt(second);
    if (opening === 0x7b || opening === 0x5d) return { format: 'json', chunks: peek.replay() };
  }
  if (first === -1 || peek.byteAt(first) !== 0x7b) return { format: 'text', chunks: peek.replay() };
  const lineEnd = await peek.find(first, (b) => b === 0x0a);
  if (lineEnd === -1) return { format: 'json', chunks: peek.replay() };
  const firstLine = tryParseJson(decodeUtf8(peek.slice(first, lineEnd), sourceName));
  if (!firstLine.ok || !isPlainObject(firstLine.value)) return { format: 'json', chunks: peek.replay() };
  const next = await peek.find(lineEnd + 1, isNonSpace);
  return { format: next === -1 ? 'json' : 'ndjson', chunks: peek.replay() };
}

/** '.' for objects one after another, undefined when they are NDJSON already (one object a line): sent as they are. */
const oneALine = (text: string): string | undefined =>
  text.split('\n').every((line) => {
    const parsed = line.trim() === '' || tryParseJson(line);
    return parsed === true || (parsed.ok && isPlainObject(parsed.value));
  })
    ? undefined
    : '.';

export async function readJsonDocument(
  chunks: AsyncIterable<Buffer>,
  sourceName: string,
  defaults: DocumentDefaults,
  detected = false,
  batchHint?: (filter: string | undefined) => string,
): Promise<DocumentBody> {
  const text = await readChunksText(chunks, sourceName, true);
  if (text.trim() === '') throw blankError(sourceName);
  const parsed = tryParseJson(text);
  // A JSON array of documents, or objects one after another as `jq '.[]'` prints them: the hint makes NDJSON.
  const array = parsed.ok && Array.isArray(parsed.value) ? parsed.value : undefined;
  if (array || (!parsed.ok && parsed.reason === UNEXPECTED_AFTER_VALUE && text[parsed.offset] === '{')) {
    const what = array
      ? `holds a JSON array of ${array.length} item${array.length === 1 ? '' : 's'}`
      : 'holds JSON objects one after another';
    throw new UsageError(
      `${sourceName}: ${what}; one document is one JSON object, many are a batch in NDJSON (one object a line)`,
      {
        code: 'invalid_input',
        hint: batchHint && `send them as a batch: ${batchHint(array ? '.[]' : oneALine(text))}`,
      },
    );
  }
  // Parsed again only to throw the error that says where the JSON broke or what it holds instead.
  const hint = detected ? 'it was read as one JSON document: if it is a text document, pass --format text' : undefined;
  const object =
    parsed.ok && isPlainObject(parsed.value)
      ? parsed.value
      : parseJsonObject(text, { source: sourceName, hint }, `a JSON object (${FIELDS_NOTE})`);
  const checked = checkDocument(fillDefaults(object, defaults));
  if (typeof checked === 'string') {
    // The problem may name the fields already; a kind that was only detected may be wrong.
    const hints = [checked.includes(FIELDS_NOTE) ? '' : FIELDS_NOTE, detected ? TEXT_HINT : ''];
    const hint = hints.filter(Boolean).join('; ') || undefined;
    throw new UsageError(`${sourceName}: ${checked}`, { code: 'invalid_input', hint });
  }
  return checked;
}

/** A plain-text document: the content as given, the rest from the flags. */
export function textDocument(content: string, defaults: DocumentDefaults): DocumentBody {
  const checked = checkDocument(fillDefaults({ content }, defaults));
  if (typeof checked === 'string') throw new UsageError(checked);
  return checked;
}

/** The object completed from the flags: a field it leaves out (or sets to null) takes the flag's value. */
export function fillDefaults(object: Record<string, unknown>, defaults: DocumentDefaults): DocumentBody {
  const body = { ...object } as Record<string, unknown>;
  for (const field of ['alias', 'label', 'perspective'] as const) {
    if ((body[field] === undefined || body[field] === null) && defaults[field] !== undefined)
      body[field] = defaults[field];
  }
  if (body.perspective === null) delete body.perspective;
  return body as DocumentBody;
}

/** A document completed from the flags, as checked; or its problem, said in one line (no object made per line). */
export function checkDocument(merged: DocumentBody): DocumentBody | string {
  const parsed = documentInput.safeParse(merged);
  return parsed.success ? parsed.data : parsed.error.issues.map(issueText).join('; ');
}

/** A problem in the words people read (`alias: required`), not zod's; documentInput is flat. */
function issueText(issue: z.core.$ZodIssue): string {
  const field = issue.path[0];
  const at = field === undefined ? '' : `${String(field)}: `;
  switch (issue.code) {
    case 'invalid_type':
      if (!issue.message.endsWith('received undefined')) {
        const found = issue.message.replace(/^.*received /, '');
        return `${at}must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}, found ${found}`;
      }
      return field === 'alias' || field === 'label'
        ? `${at}required (give it in the JSON or with --${field})`
        : `${at}required`;
    case 'invalid_value':
      return `${at}must be one of ${issue.values.map(String).join(', ')}`;
    case 'unrecognized_keys': {
      // The first ten: a document of 50,000 unknown keys made an error of 589 KB.
      const keys = issue.keys.slice(0, 10).map((k) => JSON.stringify(k));
      if (issue.keys.length > 10) keys.push(`and ${issue.keys.length - 10} more`);
      return `${at}unknown field${issue.keys.length > 1 ? 's' : ''} ${keys.join(', ')} (${FIELDS_NOTE})`;
    }
    default:
      return `${at}${issue.message}`;
  }
}

const isNonSpace = (b: number): boolean => b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d;

/** Chunks read ahead for detection, replayed in front of the rest; a search scans each chunk once. */
class PeekedChunks {
  private readonly iterator: AsyncIterator<Buffer>;
  private readonly chunks: Buffer[] = [];

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
    return Buffer.concat(this.chunks).subarray(start, end);
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

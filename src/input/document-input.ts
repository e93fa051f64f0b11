import { UsageError } from '../errors.js';
import {
  type DocumentBody,
  type DocumentDefaults,
  type DocumentFormat,
  detectDocumentFormat,
  readJsonDocument,
  textDocument,
} from './documents.js';
import { type BatchLines, type CheckWatcher, readBatchLines } from './ndjson.js';
import { type InputSource, MAX_BODY_BYTES, tooLargeError } from './source.js';
import { checkUtf8, spoolText, streamTextBody } from './text-body.js';

/**
 * The one reader of `docs submit`'s input: whatever the source holds (plain text, one JSON document,
 * NDJSON: named by --format, by a file's extension .ndjson/.jsonl, else detected), it yields request bodies that are prepared and checked against the request contract, or
 * throws a CliError naming the source (exit 2, nothing sent).
 */

/** One document, ready to send. */
export interface PreparedDocument {
  /**
   * The document as checked; the client checks it again. For a streamed text (`body` set), the content
   * here is the text's first characters: the text itself is streamed, never held.
   */
  document: DocumentBody;
  /** The request body as a stream, made again for each attempt; unset when `document` is the body. */
  body?: () => AsyncIterable<Uint8Array>;
  /** Frees what the body holds (standard input kept for a retry). */
  dispose(): Promise<void>;
}

/** A batch is read when its reader is called: a file's check pass, each valid line shown to `watch`. */
export type DocumentInput =
  { kind: 'one'; prepared: PreparedDocument } | { kind: 'batch'; read(watch?: CheckWatcher): Promise<BatchLines> };

export interface ReadDocumentOptions {
  /** The kind, when --format names it; else it is detected. */
  format?: DocumentFormat | undefined;
  /** The flags that complete a JSON document or an NDJSON line. */
  defaults: DocumentDefaults;
  /** The flags a plain text needs (asked for on a terminal); called only for text, before it is read. */
  textDefaults(): Promise<DocumentDefaults>;
  continueOnError: boolean;
  /** A flag that applies to a batch only (`--resume`): any other kind is a usage error. */
  batchFlag?: string | undefined;
  /** Called once the input is known to be a batch, before its first line is read (bulk work starts). */
  onBatch?: () => void;
}

const nothingToFree = async () => {};

/** A file named *.ndjson or *.jsonl is NDJSON whatever it holds: a batch even of one line. */
const NDJSON_NAME = /\.(ndjson|jsonl)$/i;
const JSON_NAME = /\.json$/i;

export async function readDocumentInput(source: InputSource, options: ReadDocumentOptions): Promise<DocumentInput> {
  const named = source.kind === 'file' && NDJSON_NAME.test(source.name) ? 'ndjson' : undefined;
  const format = options.format ?? named;
  const detected = format ? { format, chunks: source.open() } : await detectDocumentFormat(source.open(), source.name);
  // A *.json file is never sent as text: what does not parse as a JSON document is said so.
  if (!format && detected.format === 'text' && JSON_NAME.test(source.name)) detected.format = 'json';
  if (options.batchFlag !== undefined && detected.format !== 'ndjson') {
    const kind = detected.format === 'json' ? 'one JSON document' : 'text';
    throw new UsageError(`${options.batchFlag} applies to a batch (NDJSON), but ${source.name} was read as ${kind}`, {
      hint: 'pass --format ndjson if it is a batch',
    });
  }
  switch (detected.format) {
    case 'text':
      return { kind: 'one', prepared: await readText(source, detected.chunks, await options.textDefaults()) };
    case 'json': {
      const document = await readJsonDocument(detected.chunks, source.name, options.defaults);
      return { kind: 'one', prepared: { document, dispose: nothingToFree } };
    }
    case 'ndjson':
      options.onBatch?.();
      return {
        kind: 'batch',
        read: (watch) => readBatchLines(source, detected.chunks, options.defaults, options.continueOnError, watch),
      };
  }
}

/** A document given as text (`--content`): checked, sent as JSON of it. */
export function preparedText(content: string, flags: DocumentDefaults): PreparedDocument {
  return { document: textDocument(content, flags), dispose: nothingToFree };
}

/**
 * Plain text from a source, streamed into the request body (src/input/text-body.ts) and checked whole
 * first: a file is read once to check it and again to send it; standard input is kept while it is sent
 * (in a temporary file beyond a few MiB), so a retry can send it again.
 */
async function readText(
  source: InputSource,
  chunks: AsyncIterable<Buffer>,
  flags: DocumentDefaults,
): Promise<PreparedDocument> {
  // The flags checked before the text is read (a missing --label is said before a large input is read).
  const { content: _standIn, ...head } = textDocument('-', flags);
  if (source.size !== undefined && source.size > MAX_BODY_BYTES) throw tooLargeError(source.name, MAX_BODY_BYTES);
  if (source.reopenable) {
    const preview = await checkUtf8(chunks, source.name);
    return {
      document: { ...head, content: preview },
      body: () => streamTextBody(head, source.open(), source.name, MAX_BODY_BYTES),
      dispose: nothingToFree,
    };
  }
  const spooled = await spoolText(chunks, source.name, MAX_BODY_BYTES);
  return {
    document: { ...head, content: spooled.preview },
    body: () => streamTextBody(head, spooled.open(), source.name, MAX_BODY_BYTES),
    dispose: spooled.dispose,
  };
}

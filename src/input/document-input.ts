import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import {
  type DocumentBody,
  type DocumentDefaults,
  type DocumentFormat,
  detectDocumentFormat,
  readJsonDocument,
  textDocument,
} from './documents.js';
import {
  type BatchLines,
  type BatchOptions,
  type CheckWatcher,
  type NdjsonLine,
  readBatchLines,
  readNdjsonDocuments,
} from './ndjson.js';
import { blankError, emptyError, type InputSource, MAX_BODY_BYTES, tooLargeError } from './source.js';
import { Utf8Stream } from './utf8.js';

/** `docs submit`'s input (text, one JSON document or NDJSON), read into request bodies checked against the contract. */

export interface PreparedDocument {
  /** The document as checked; for a streamed text (`body` set), with the text's first characters only. */
  document: DocumentBody;
  /** The request body as a stream, made again for each attempt; unset when `document` is the body. */
  body?: () => AsyncIterable<Uint8Array>;
  /** Frees what the body holds (standard input kept for a retry). */
  dispose?(): Promise<void>;
}

/** A batch is read when its reader is called: a file's check pass, each valid line shown to `watch`. */
export type DocumentInput =
  | { kind: 'one'; prepared: PreparedDocument }
  | {
      kind: 'batch';
      read(watch?: CheckWatcher): Promise<BatchLines>;
      /** A file's lines read again from its start, as the send pass reads them. */
      reread(): AsyncIterable<NdjsonLine>;
    };

export interface ReadDocumentOptions extends Omit<BatchOptions, 'detected'> {
  format?: DocumentFormat | undefined;
  /** The flags a plain text needs (asked on a terminal); called for text only, before it is read. */
  textDefaults(): Promise<DocumentDefaults>;
  /** A flag that applies to a batch only (`--resume`): any other kind is a usage error. */
  batchFlag?: string | undefined;
  /** Called once bulk work starts: a batch before its first line is read, a text past SPOOL_MEMORY_BYTES. */
  onBulk?: () => void;
}

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
    const array = detected.format === 'json' && options.batchHint;
    throw new UsageError(`${options.batchFlag} applies to a batch (NDJSON), but ${source.name} was read as ${kind}`, {
      hint: array
        ? `if it is NDJSON (a document a line), pass --format ndjson; if a JSON array, send its documents as a batch: ${array('.[]')}`
        : 'pass --format ndjson if it is a batch',
    });
  }
  switch (detected.format) {
    case 'text':
      return { kind: 'one', prepared: await readText(source, detected.chunks, options) };
    case 'json': {
      const { defaults, batchHint } = options;
      const document = await readJsonDocument(detected.chunks, source.name, defaults, !format, batchHint);
      return { kind: 'one', prepared: { document } };
    }
    case 'ndjson':
      options.onBulk?.();
      return {
        kind: 'batch',
        read: (watch) => readBatchLines(source, detected.chunks, { ...options, detected: !format }, watch),
        reread: () => readNdjsonDocuments(source.open(), source.name, options.defaults),
      };
  }
}

export function preparedText(content: string, flags: DocumentDefaults): PreparedDocument {
  return { document: textDocument(content, flags) };
}

/**
 * Plain text, checked through before anything is sent, then streamed into the body at each attempt: a file read
 * again, standard input kept (past SPOOL_MEMORY_BYTES in a 0600 temporary file).
 */
async function readText(
  source: InputSource,
  chunks: AsyncIterable<Buffer>,
  options: ReadDocumentOptions,
): Promise<PreparedDocument> {
  // The flags checked before the text is read (a missing --label is said before a large input is read).
  const { content: _standIn, ...head } = textDocument('-', await options.textDefaults());
  const { name, reopenable } = source;
  if (source.size !== undefined && source.size > MAX_BODY_BYTES) throw tooLargeError(name, MAX_BODY_BYTES, true);
  // A device or pipe given as a file (/dev/zero) gets no advice to split it.
  const splittable = source.kind === 'stdin' || reopenable;
  const text = new Utf8Stream(name);
  let preview = '';
  // Until a character that is not white space is read.
  let blank = true;
  const kept: Buffer[] = [];
  let dir: string | undefined;
  let file: Awaited<ReturnType<typeof open>> | undefined;
  const dispose = async () => {
    await file?.close().catch(() => undefined);
    file = undefined;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  };
  try {
    for await (const chunk of chunks) {
      if (text.bytes + chunk.length > MAX_BODY_BYTES) throw tooLargeError(name, MAX_BODY_BYTES, splittable);
      if (text.bytes <= SPOOL_MEMORY_BYTES && text.bytes + chunk.length > SPOOL_MEMORY_BYTES) options.onBulk?.();
      const part = text.push(chunk);
      if (blank) blank = /^\s*$/.test(part);
      // A copy: a slice would keep the whole chunk's string alive.
      if (preview.length < PREVIEW_CHARS) preview += Array.from(part.slice(0, PREVIEW_CHARS)).join('');
      if (reopenable) continue;
      // Every chunk so far is kept until the text passes SPOOL_MEMORY_BYTES.
      if (file === undefined && text.bytes <= SPOOL_MEMORY_BYTES) {
        kept.push(chunk);
        continue;
      }
      if (file === undefined) {
        dir = await mkdtemp(join(tmpdir(), 'facectl-stdin-'));
        file = await open(join(dir, 'input'), 'wx', 0o600);
        for (const part of kept.splice(0)) await file.write(part);
      }
      await file.write(chunk);
    }
    if (text.bytes === 0) throw emptyError(name);
    const tail = text.end();
    if (blank && /^\s*$/.test(tail)) throw blankError(name);
    preview += tail;
    await file?.close();
    file = undefined;
  } catch (error) {
    await dispose();
    throw error;
  }
  const spool = dir === undefined ? undefined : join(dir, 'input');
  const again = () =>
    reopenable ? source.open() : spool === undefined ? kept : createReadStream(spool, { highWaterMark: 256 * 1024 });
  return {
    document: { ...head, content: preview },
    body: () => streamTextBody(head, again(), name, MAX_BODY_BYTES),
    dispose,
  };
}

/** The text escaped chunk by chunk into its JSON body: a 50 MiB document needs memory for a chunk, not for copies. */
export async function* streamTextBody(
  head: Omit<DocumentBody, 'content'>,
  chunks: AsyncIterable<Buffer> | readonly Buffer[],
  sourceName: string,
  maxBytes: number,
): AsyncGenerator<Buffer> {
  // The head's fields, then `"content":"` (the closing `"}` of an empty content cut off).
  yield Buffer.from(JSON.stringify({ ...head, content: '' }).slice(0, -2), 'utf8');
  const text = new Utf8Stream(sourceName);
  for await (const chunk of chunks) {
    if (text.bytes + chunk.length > maxBytes) throw tooLargeError(sourceName, maxBytes, true);
    const part = text.push(chunk);
    if (part.length > 0) yield escaped(part);
  }
  if (text.bytes === 0) throw emptyError(sourceName);
  const tail = text.end();
  yield Buffer.from(`${tail.length > 0 ? escaped(tail).toString('utf8') : ''}"}`, 'utf8');
}

/** The text as the inside of a JSON string. */
const escaped = (text: string): Buffer => Buffer.from(JSON.stringify(text).slice(1, -1), 'utf8');

/** The content's characters a checked text carries for the client's check. */
const PREVIEW_CHARS = 64;

/** Up to this many bytes of standard input stay in memory; a longer input goes to a temporary file. */
export const SPOOL_MEMORY_BYTES = 4 * 1024 * 1024;

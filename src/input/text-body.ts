import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DocumentBody } from './documents.js';
import { emptyError, tooLargeError } from './source.js';
import { Utf8Stream } from './utf8.js';

/**
 * A plain-text document sent without holding it: the JSON body is written as the input is read, the
 * content escaped chunk by chunk (`{"alias":..,"label":..,"content":"` + escaped chunks + `"}`), so a
 * 50 MiB document needs memory for a chunk, not for the text, its string and its JSON copy. Input is
 * decoded as strict UTF-8 in streaming mode: a character split across two chunks is kept whole.
 */

/** The body's bytes, from `chunks` (which must not be empty). */
export async function* streamTextBody(
  head: Omit<DocumentBody, 'content'>,
  chunks: AsyncIterable<Buffer>,
  sourceName: string,
  maxBytes: number,
): AsyncGenerator<Buffer> {
  const fields = Object.entries(head).filter(([, value]) => value !== undefined);
  const open = `{${fields.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)},`).join('')}"content":"`;
  yield Buffer.from(open, 'utf8');
  const text = new Utf8Stream(sourceName);
  for await (const chunk of chunks) {
    if (text.bytes + chunk.length > maxBytes) throw tooLargeError(sourceName, maxBytes);
    const part = text.push(chunk);
    if (part.length > 0) yield escaped(part);
  }
  if (text.bytes === 0) throw emptyError(sourceName);
  const tail = text.end();
  yield Buffer.from(`${tail.length > 0 ? escaped(tail).toString('utf8') : ''}"}`, 'utf8');
}

/** The text as the inside of a JSON string (JSON.stringify without its quotes). */
function escaped(text: string): Buffer {
  const json = JSON.stringify(text);
  return Buffer.from(json.slice(1, json.length - 1), 'utf8');
}

/** How many characters of the content a checked text carries for the client's check (see document-input.ts). */
const PREVIEW_CHARS = 64;

/** The first characters of a decoded chunk, copied: a slice would keep the whole chunk's string alive. */
function firstChars(text: string): string {
  return Array.from(text.slice(0, PREVIEW_CHARS)).join('');
}

/**
 * Reads a source once without keeping it, to refuse bytes that are not UTF-8 (naming the line) and
 * empty input before anything is sent. Used for files, which can be read again to send them. Returns
 * the text's first characters.
 */
export async function checkUtf8(chunks: AsyncIterable<Buffer>, sourceName: string): Promise<string> {
  const text = new Utf8Stream(sourceName);
  let preview = '';
  for await (const chunk of chunks) {
    const part = text.push(chunk);
    if (preview.length < PREVIEW_CHARS) preview += firstChars(part);
  }
  if (text.bytes === 0) throw emptyError(sourceName);
  return preview + text.end();
}

/** A source read once and kept so it can be sent (and retried) after it was checked. */
export interface SpooledText {
  /** The text's first characters. */
  preview: string;
  open(): AsyncIterable<Buffer>;
  dispose(): Promise<void>;
}

/** Up to this many bytes stay in memory; a longer input goes to a private temporary file. */
export const SPOOL_MEMORY_BYTES = 4 * 1024 * 1024;

/**
 * Reads standard input to its end before anything is sent: it is checked as strict UTF-8 (naming the
 * line), refused when empty or over `maxBytes`, and kept, in memory when small and otherwise in a
 * temporary file of mode 0600, so that bad input sends nothing and a retry can send it again. Memory
 * stays bounded by SPOOL_MEMORY_BYTES whatever the input's size.
 */
export async function spoolText(
  chunks: AsyncIterable<Buffer>,
  sourceName: string,
  maxBytes: number,
): Promise<SpooledText> {
  const text = new Utf8Stream(sourceName);
  let preview = '';
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let dir: string | undefined;
  let file: Awaited<ReturnType<typeof open>> | undefined;
  const dispose = async () => {
    await file?.close().catch(() => undefined);
    file = undefined;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  };
  try {
    for await (const chunk of chunks) {
      if (text.bytes + chunk.length > maxBytes) throw tooLargeError(sourceName, maxBytes);
      const part = text.push(chunk);
      if (preview.length < PREVIEW_CHARS) preview += firstChars(part);
      if (file === undefined && keptBytes + chunk.length <= SPOOL_MEMORY_BYTES) {
        kept.push(chunk);
        keptBytes += chunk.length;
        continue;
      }
      if (file === undefined) {
        dir = await mkdtemp(join(tmpdir(), 'facectl-stdin-'));
        file = await open(join(dir, 'input'), 'wx', 0o600);
        for (const part of kept.splice(0)) await file.write(part);
      }
      await file.write(chunk);
    }
    if (text.bytes === 0) throw emptyError(sourceName);
    preview += text.end();
    await file?.close();
    file = undefined;
  } catch (error) {
    await dispose();
    throw error;
  }
  const path = dir === undefined ? undefined : join(dir, 'input');
  return {
    preview,
    open: () => (path === undefined ? fromMemory(kept) : fromFile(path)),
    dispose,
  };
}

async function* fromMemory(parts: readonly Buffer[]): AsyncGenerator<Buffer> {
  yield* parts;
}

async function* fromFile(path: string): AsyncGenerator<Buffer> {
  for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 })) yield chunk as Buffer;
}

import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DocumentBody } from './documents.js';
import { emptyError, tooLargeError } from './source.js';
import { invalidUtf8Error } from './utf8.js';

/**
 * A plain-text document sent without holding it: the JSON body is written as the input is read, the
 * content escaped chunk by chunk (`{"alias":..,"label":..,"content":"` + escaped chunks + `"}`), so a
 * 50 MiB document needs memory for a chunk, not for the text, its string and its JSON copy. Input is
 * decoded as strict UTF-8 in streaming mode: a character split across two chunks is kept whole.
 */

/** The body's bytes, from `chunks` (which must not be empty; see firstChunk). */
export async function* streamTextBody(
  head: Omit<DocumentBody, 'content'>,
  chunks: AsyncIterable<Buffer>,
  sourceName: string,
  maxBytes: number,
): AsyncGenerator<Buffer> {
  const fields = Object.entries(head).filter(([, value]) => value !== undefined);
  const open = `{${fields.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)},`).join('')}"content":"`;
  yield Buffer.from(open, 'utf8');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let total = 0;
  let line = 1;
  // The last chunk and its first line: a character cut short at the very end is reported in it.
  let last: Buffer = Buffer.alloc(0);
  let lastLine = 1;
  for await (const chunk of chunks) {
    [last, lastLine] = [chunk, line];
    total += chunk.length;
    if (total > maxBytes) throw tooLargeError(sourceName, maxBytes);
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch {
      throw invalidUtf8Error(chunk, sourceName, line);
    }
    if (text.length > 0) yield escaped(text);
    line += countNewlines(chunk);
  }
  if (total === 0) throw emptyError(sourceName);
  let tail: string;
  try {
    tail = decoder.decode();
  } catch {
    throw invalidUtf8Error(last, sourceName, lastLine);
  }
  yield Buffer.from(`${tail.length > 0 ? JSON.stringify(tail).slice(1, -1) : ''}"}`, 'utf8');
}

/** The text as the inside of a JSON string (JSON.stringify without its quotes). */
function escaped(text: string): Buffer {
  const json = JSON.stringify(text);
  return Buffer.from(json.slice(1, json.length - 1), 'utf8');
}

function countNewlines(bytes: Buffer): number {
  let n = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) n++;
  return n;
}

/**
 * Reads a source once without keeping it, to refuse bytes that are not UTF-8 (naming the line) before
 * anything is sent. Used for files, which can be read again to send them.
 */
export async function checkUtf8(chunks: AsyncIterable<Buffer>, sourceName: string): Promise<void> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 1;
  let last: Buffer = Buffer.alloc(0);
  let lastLine = 1;
  for await (const chunk of chunks) {
    [last, lastLine] = [chunk, line];
    try {
      decoder.decode(chunk, { stream: true });
    } catch {
      throw invalidUtf8Error(chunk, sourceName, line);
    }
    line += countNewlines(chunk);
  }
  try {
    decoder.decode();
  } catch {
    throw invalidUtf8Error(last, sourceName, lastLine);
  }
}

/** A source read once and kept so it can be sent (and retried) after it was checked. */
export interface SpooledText {
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
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  let line = 1;
  let last: Buffer = Buffer.alloc(0);
  let lastLine = 1;
  let dir: string | undefined;
  let file: Awaited<ReturnType<typeof open>> | undefined;
  const dispose = async () => {
    await file?.close().catch(() => undefined);
    file = undefined;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  };
  try {
    for await (const chunk of chunks) {
      [last, lastLine] = [chunk, line];
      total += chunk.length;
      if (total > maxBytes) throw tooLargeError(sourceName, maxBytes);
      try {
        decoder.decode(chunk, { stream: true });
      } catch {
        throw invalidUtf8Error(chunk, sourceName, line);
      }
      line += countNewlines(chunk);
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
    if (total === 0) throw emptyError(sourceName);
    try {
      decoder.decode();
    } catch {
      throw invalidUtf8Error(last, sourceName, lastLine);
    }
    await file?.close();
    file = undefined;
  } catch (error) {
    await dispose();
    throw error;
  }
  const path = dir === undefined ? undefined : join(dir, 'input');
  return {
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

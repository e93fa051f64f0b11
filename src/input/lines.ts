import { UsageError } from '../errors.js';
import { formatBytes, MAX_BODY_BYTES } from './source.js';
import { decodeUtf8 } from './utf8.js';

/**
 * A streaming line reader, its memory bounded by the longest line. Not node:readline: its decoder replaces
 * invalid bytes silently; here a line not valid UTF-8 has `error` (no text or bytes) and reading goes on.
 */

/** `bytes`: a view into the chunk read, not a copy. */
type SourceLine = { number: number; text: string; bytes?: Buffer; error?: UsageError };

/** Reading stops there: the rest of the line is never buffered. */
export class LineTooLongError extends UsageError {
  constructor(
    sourceName: string,
    readonly line: number,
    maxLineBytes: number,
  ) {
    super(`${sourceName}: line ${line}: longer than ${formatBytes(maxLineBytes)}, the service's request size limit`, {
      code: 'too_large',
    });
  }
}

export async function* readLines(chunks: AsyncIterable<Buffer>, sourceName: string, maxLineBytes = MAX_BODY_BYTES) {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  const finish = (tail: Buffer): SourceLine => {
    number++;
    let bytes = pending.length === 0 ? tail : Buffer.concat([...pending, tail], pendingBytes + tail.length);
    pending = [];
    pendingBytes = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    if (bytes.length > maxLineBytes) throw new LineTooLongError(sourceName, number, maxLineBytes);
    try {
      return { number, text: decodeUtf8(bytes, sourceName, number), bytes };
    } catch (error) {
      return { number, text: '', error: error as UsageError };
    }
  };
  for await (const chunk of chunks) {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) {
        if (start < chunk.length) {
          pending.push(chunk.subarray(start));
          pendingBytes += chunk.length - start;
          // Refuse a runaway line as soon as it passes the cap, before it fills memory.
          if (pendingBytes > maxLineBytes + 1) throw new LineTooLongError(sourceName, number + 1, maxLineBytes);
        }
        break;
      }
      yield finish(chunk.subarray(start, newline));
      start = newline + 1;
    }
  }
  if (pendingBytes > 0) yield finish(Buffer.alloc(0));
}

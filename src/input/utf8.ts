import { UsageError } from '../errors.js';

/** Invalid UTF-8 is refused and located: a replacement character sent silently would change the document. */

const decoder = new TextDecoder('utf-8', { fatal: true });
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

/** Decodes bytes as strict UTF-8; `firstLine` is the line of the first byte, for an error naming it. */
export function decodeUtf8(bytes: Uint8Array, sourceName: string, firstLine = 1): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw invalidUtf8Error(bytes, sourceName, firstLine);
  }
}

function invalidUtf8Error(bytes: Uint8Array, sourceName: string, line: number): UsageError {
  const offset = findInvalidUtf8(bytes);
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  const byte = bytes[offset] ?? 0;
  return new UsageError(
    `${sourceName}: line ${line}: not valid UTF-8 text (byte 0x${byte.toString(16).padStart(2, '0')})`,
    { code: 'invalid_input', hint: 'save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`), then run again' },
  );
}

/** Offset of the first byte breaking UTF-8 (or the length): the decoder's first U+FFFD not spelt as such (EF BF BD). */
export function findInvalidUtf8(bytes: Uint8Array): number {
  const text = lenient.decode(bytes);
  let offset = 0;
  let from = 0;
  for (let at = text.indexOf('\ufffd'); at !== -1; at = text.indexOf('\ufffd', at + 1)) {
    offset += Buffer.byteLength(text.slice(from, at));
    from = at;
    if (bytes[offset] !== 0xef || bytes[offset + 1] !== 0xbf || bytes[offset + 2] !== 0xbd) return offset;
  }
  return bytes.length;
}

/** Strict UTF-8 over a stream of chunks: a character split across two chunks is kept whole. */
export class Utf8Stream {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private line = 1;
  /** The last chunk and its first line: a character cut short at the very end is reported in it. */
  private last: Uint8Array = new Uint8Array(0);
  private lastLine = 1;
  bytes = 0;

  constructor(private readonly sourceName: string) {}

  push(chunk: Uint8Array): string {
    [this.last, this.lastLine] = [chunk, this.line];
    this.bytes += chunk.length;
    let text: string;
    try {
      text = this.decoder.decode(chunk, { stream: true });
    } catch {
      throw invalidUtf8Error(chunk, this.sourceName, this.line);
    }
    for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) this.line++;
    return text;
  }

  end(): string {
    try {
      return this.decoder.decode();
    } catch {
      throw invalidUtf8Error(this.last, this.sourceName, this.lastLine);
    }
  }
}

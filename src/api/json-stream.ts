/**
 * A streaming JSON reader for answers that carry one huge string, such as the document the service
 * echoes after `docs submit` (its whole content). The bytes are parsed as they arrive, and the named
 * top-level string fields are kept out of memory: dropped, or written (escaped as JSON.stringify would)
 * to a private temporary file; the value holds a marker string in their place, and LargeStrings
 * (large-strings.ts) prints it with them written back. Every other token is parsed by JSON.parse itself
 * once it ended, so the value is the one JSON.parse gives for the same bytes; bytes that are not JSON
 * throw a JsonStreamError naming the offset.
 * Why own code and not a streaming JSON library: docs/decisions.md (peak RSS of a 50 MiB document).
 */

import { BACKSLASH, JsonStreamError, safeCut, unexpected } from './json-scan.js';

export { JsonStreamError } from './json-scan.js';

/** Receives the text of one large string, in pieces that never split a surrogate pair. */
export interface LargeStringWriter {
  write(piece: string): void;
  /** Ends the string; returns the value that stands for it in the parsed result. */
  end(): string;
}

export interface JsonStreamOptions {
  /** Top-level string fields to stream to `open` instead of holding. */
  largeFields?: ReadonlySet<string>;
  /** Such a field shorter than this many bytes (as sent) is kept as an ordinary string. */
  inlineBytes?: number;
  open?: (field: string) => LargeStringWriter;
}

const enum Expect {
  Value,
  ValueOrArrayEnd,
  KeyOrObjectEnd,
  Key,
  Colon,
  CommaOrEnd,
  Done,
}

const enum Token {
  None,
  String,
  Number,
  Literal,
}

interface Frame {
  container: Record<string, unknown> | unknown[];
  key: string | undefined;
}

const QUOTE = 0x22;
const NUMBER_BYTES = new Uint8Array(256);
for (const c of '0123456789+-.eE') NUMBER_BYTES[c.charCodeAt(0)] = 1;
const EMPTY = Buffer.alloc(0);

/** Push parser: write() the bytes as they come, then end() for the value. */
export class JsonStreamParser {
  /** Bytes of large strings passed to their writers (not held). */
  largeBytes = 0;
  private offset = 0;
  private expect = Expect.Value;
  private readonly stack: Frame[] = [];
  private result: unknown;
  private token = Token.None;
  private tokenStart = 0;
  private parts: Buffer[] = [];
  private partsBytes = 0;
  /** Inside a string: the previous byte was a backslash (the escape may span two chunks). */
  private escaped = false;
  /** The current string is the value of a large field: its writer once it passed inlineBytes. */
  private largeField: string | undefined;
  private largeWriter: LargeStringWriter | undefined;
  /** A high surrogate that ended the last piece, held so the pair is written whole. */
  private highSurrogate = '';
  private readonly inlineBytes: number;

  constructor(private readonly options: JsonStreamOptions = {}) {
    this.inlineBytes = options.inlineBytes ?? 0;
  }

  /** Parses the next bytes. A token's bytes are kept by reference until it ends: do not reuse `chunk`. */
  write(chunk: Buffer): void {
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.token === Token.String) {
        i = this.scanString(chunk, i);
        continue;
      }
      if (this.token !== Token.None) {
        i = this.scanBare(chunk, i);
        continue;
      }
      const b = chunk[i] as number;
      if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) {
        i++;
        continue;
      }
      this.structural(b, this.offset + i);
      // A number or literal starts with this byte: scanBare takes it.
      if (this.token === Token.None || this.token === Token.String) i++;
    }
    this.offset += n;
  }

  /** The parsed value, once the input ended; throws if it ended before the value did. */
  end(): unknown {
    if (this.stack.length === 0 && (this.token === Token.Number || this.token === Token.Literal)) this.finishBare();
    if (this.token !== Token.None || this.expect !== Expect.Done) {
      throw new JsonStreamError(
        this.offset === 0 ? 'empty body' : 'unexpected end of JSON (the answer was cut short)',
        this.offset,
      );
    }
    return this.result;
  }

  private structural(b: number, at: number): void {
    switch (this.expect) {
      case Expect.Value:
      case Expect.ValueOrArrayEnd:
        if (b === 0x5d && this.expect === Expect.ValueOrArrayEnd) return this.close();
        return this.startValue(b, at);
      case Expect.KeyOrObjectEnd:
      case Expect.Key:
        if (b === 0x7d && this.expect === Expect.KeyOrObjectEnd) return this.close();
        if (b !== QUOTE) throw unexpected(b, at, 'a key in double quotes');
        return this.startString(at, undefined);
      case Expect.Colon:
        if (b !== 0x3a) throw unexpected(b, at, "':'");
        this.expect = Expect.Value;
        return;
      case Expect.CommaOrEnd: {
        const top = this.stack[this.stack.length - 1] as Frame;
        const isArray = Array.isArray(top.container);
        if (b === 0x2c) {
          this.expect = isArray ? Expect.Value : Expect.Key;
          return;
        }
        if (b === (isArray ? 0x5d : 0x7d)) return this.close();
        throw unexpected(b, at, isArray ? "',' or ']'" : "',' or '}'");
      }
      case Expect.Done:
        throw unexpected(b, at, 'the end of the JSON');
    }
  }

  private startValue(b: number, at: number): void {
    if (b === 0x7b) {
      this.stack.push({ container: {}, key: undefined });
      this.expect = Expect.KeyOrObjectEnd;
    } else if (b === 0x5b) {
      this.stack.push({ container: [], key: undefined });
      this.expect = Expect.ValueOrArrayEnd;
    } else if (b === QUOTE) {
      const top = this.stack[this.stack.length - 1];
      const field = this.stack.length === 1 && top && !Array.isArray(top.container) ? top.key : undefined;
      const large = field !== undefined && this.options.open && this.options.largeFields?.has(field);
      this.startString(at, large ? field : undefined);
    } else if (NUMBER_BYTES[b] === 1) {
      this.startBare(Token.Number, at);
    } else if (b >= 0x61 && b <= 0x7a) {
      this.startBare(Token.Literal, at);
    } else {
      throw unexpected(b, at, 'a value');
    }
  }

  private startString(at: number, largeField: string | undefined): void {
    this.token = Token.String;
    this.tokenStart = at;
    this.parts = [];
    this.partsBytes = 0;
    this.escaped = false;
    this.largeField = largeField;
    this.largeWriter = undefined;
    this.highSurrogate = '';
  }

  /** Consumes string bytes from `from`; returns where scanning stopped (after the closing quote). */
  private scanString(chunk: Buffer, from: number): number {
    let i = from;
    if (this.escaped) {
      // The byte after a backslash that ended the previous chunk: never the closing quote.
      this.escaped = false;
      i++;
    }
    // The next quote and backslash, each searched again only once passed (long strings have many escapes).
    let quote = -2;
    let slash = -2;
    let end = -1;
    while (i < chunk.length) {
      if (quote !== -1 && quote < i) quote = chunk.indexOf(QUOTE, i);
      if (slash !== -1 && slash < i) slash = chunk.indexOf(BACKSLASH, i);
      if (slash !== -1 && (quote === -1 || slash < quote)) {
        if (slash + 1 >= chunk.length) {
          this.escaped = true;
          break;
        }
        i = slash + 2;
        continue;
      }
      end = quote;
      break;
    }
    const stop = end === -1 ? chunk.length : end;
    if (stop > from) {
      this.parts.push(chunk.subarray(from, stop));
      this.partsBytes += stop - from;
    }
    if (end === -1) {
      if (this.largeField !== undefined && this.partsBytes > this.inlineBytes) this.flushLarge(false);
      return chunk.length;
    }
    this.finishString();
    return end + 1;
  }

  private finishString(): void {
    this.token = Token.None;
    if (this.largeField !== undefined && (this.largeWriter !== undefined || this.partsBytes > this.inlineBytes)) {
      this.flushLarge(true);
      const writer = this.largeWriter as LargeStringWriter;
      this.largeWriter = undefined;
      this.largeField = undefined;
      return this.value(writer.end());
    }
    this.largeField = undefined;
    const bytes = this.takeParts();
    let text: string;
    try {
      text = JSON.parse(`"${bytes.toString('utf8')}"`) as string;
    } catch (error) {
      throw new JsonStreamError(`invalid string (${reason(error)})`, this.tokenStart);
    }
    if (this.expect === Expect.Key || this.expect === Expect.KeyOrObjectEnd) {
      (this.stack[this.stack.length - 1] as Frame).key = text;
      this.expect = Expect.Colon;
      return;
    }
    this.value(text);
  }

  /**
   * Hands the held bytes of a large string to its writer: all of them at the end of the string, else
   * up to the last point where no escape sequence and no UTF-8 character is cut (the rest stays held).
   */
  private flushLarge(final: boolean): void {
    if (this.largeWriter === undefined) this.largeWriter = this.options.open?.(this.largeField as string);
    const bytes = this.takeParts();
    const cut = final ? bytes.length : safeCut(bytes, this.escaped);
    const rest = bytes.subarray(cut);
    if (rest.length > 0) {
      this.parts = [rest];
      this.partsBytes = rest.length;
    }
    if (cut === 0 && !final) return;
    let piece: string;
    try {
      piece = JSON.parse(`"${bytes.toString('utf8', 0, cut)}"`) as string;
    } catch (error) {
      throw new JsonStreamError(`invalid string (${reason(error)})`, this.tokenStart);
    }
    this.largeBytes += cut;
    piece = this.highSurrogate + piece;
    this.highSurrogate = '';
    if (!final && piece.length > 0) {
      const last = piece.charCodeAt(piece.length - 1);
      if (last >= 0xd800 && last <= 0xdbff) {
        this.highSurrogate = piece.slice(-1);
        piece = piece.slice(0, -1);
      }
    }
    if (piece.length > 0) this.largeWriter?.write(piece);
  }

  private takeParts(): Buffer {
    const bytes =
      this.parts.length === 1
        ? (this.parts[0] as Buffer)
        : this.parts.length === 0
          ? EMPTY
          : Buffer.concat(this.parts, this.partsBytes);
    this.parts = [];
    this.partsBytes = 0;
    return bytes;
  }

  private startBare(kind: Token, at: number): void {
    this.token = kind;
    this.tokenStart = at;
    this.parts = [];
    this.partsBytes = 0;
  }

  /** Numbers and literals: their bytes up to the first byte that cannot belong to them. */
  private scanBare(chunk: Buffer, from: number): number {
    let i = from;
    if (this.token === Token.Number) while (i < chunk.length && NUMBER_BYTES[chunk[i] as number] === 1) i++;
    else while (i < chunk.length && (chunk[i] as number) >= 0x61 && (chunk[i] as number) <= 0x7a) i++;
    if (i > from) {
      this.parts.push(chunk.subarray(from, i));
      this.partsBytes += i - from;
    }
    if (this.partsBytes > 1024) throw new JsonStreamError('invalid value (too long)', this.tokenStart);
    if (i < chunk.length) this.finishBare();
    return i;
  }

  private finishBare(): void {
    const text = this.takeParts().toString('latin1');
    this.token = Token.None;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new JsonStreamError(`invalid value ${JSON.stringify(text)}`, this.tokenStart);
    }
    this.value(value);
  }

  private close(): void {
    const frame = this.stack.pop() as Frame;
    this.value(frame.container);
  }

  private value(value: unknown): void {
    const top = this.stack[this.stack.length - 1];
    if (top === undefined) {
      this.result = value;
      this.expect = Expect.Done;
      return;
    }
    if (Array.isArray(top.container)) top.container.push(value);
    else {
      const key = top.key as string;
      if (key === '__proto__') {
        // As JSON.parse does: an own property, not the prototype.
        Object.defineProperty(top.container, key, { value, writable: true, enumerable: true, configurable: true });
      } else top.container[key] = value;
      top.key = undefined;
    }
    this.expect = Expect.CommaOrEnd;
  }
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message.replace(/ in JSON at position \d+.*$/s, '') : String(error);
}

/** Reads a whole JSON value from chunks (see JsonStreamParser). */
export async function readJsonStream(
  chunks: AsyncIterable<Buffer>,
  options: JsonStreamOptions = {},
  afterChunk?: () => Promise<void>,
): Promise<unknown> {
  const parser = new JsonStreamParser(options);
  for await (const chunk of chunks) {
    parser.write(chunk);
    if (afterChunk) await afterChunk();
  }
  return parser.end();
}

import { locateJsonError } from '../input/json.js';

/**
 * A streaming reader for answers carrying one huge string (docs/decisions.md): the named top-level string
 * fields go to a writer in pieces as they arrive, a marker string in their place; every other byte is kept
 * for JSON.parse at the end, so the value is JSON.parse's for the same bytes.
 */

/** Receives the text of one large string in pieces that never split a surrogate pair; end() gives its stand-in. */
export type LargeStringWriter = { write(piece: string): void; end(): string };

export interface JsonStreamOptions {
  /** Top-level string fields streamed to `open`. */
  largeFields?: ReadonlySet<string>;
  /** Such a field of up to this many bytes (as sent) is kept as an ordinary string. */
  inlineBytes?: number;
  open?: (field: string) => LargeStringWriter;
}

export class JsonStreamError extends Error {
  constructor(message: string, offset: number) {
    super(`${message} at byte ${offset}`);
    this.name = 'JsonStreamError';
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** write() the bytes as they come, then end() for the value. */
export class JsonStreamParser {
  /** Bytes of large strings passed to their writers (not held). */
  largeBytes = 0;
  private offset = 0;
  private depth = 0;
  private topIsObject: boolean | undefined;
  /** The last of `{`, `,` and `:` at depth 1: a string after `:` is a value, else a key. */
  private last = 0;
  /** The last key at depth 1 of the top-level object. */
  private key: string | undefined;
  private inString = false;
  /** Inside a string: the chunk ended on a backslash, so the next byte is escaped. */
  private escaped = false;
  /** The current string: a key at depth 1 or a large field's value (both held), or other. */
  private role: 'key' | 'large' | 'other' = 'other';
  private stringStart = 0;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private writer: LargeStringWriter | undefined;
  /** A high surrogate that ended the last piece, held so the pair is written whole. */
  private highSurrogate = '';
  /** The bytes outside large strings, markers in their place; for each marker, the bytes it saves. */
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  private readonly splices: { at: number; saved: number }[] = [];

  constructor(private readonly options: JsonStreamOptions = {}) {}

  write(chunk: Buffer): void {
    const n = chunk.length;
    let from = 0;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        const end = this.stringEnd(chunk, i);
        if (this.role !== 'other') this.hold(chunk.subarray(i, end === -1 ? n : end));
        if (end === -1) break;
        i = end + 1;
        this.inString = false;
        if (this.role === 'key') this.key = this.decodeHeld();
        if (this.role === 'large') {
          this.endLarge(this.offset + i);
          from = i;
        }
        continue;
      }
      const b = chunk[i] as number;
      if (b === QUOTE) {
        this.startString(this.offset + i);
        if (this.role === 'large') this.keep(chunk.subarray(from, i));
      } else if (b === 0x7b || b === 0x5b) {
        this.topIsObject ??= b === 0x7b;
        if (++this.depth === 1) this.last = b;
      } else if (b === 0x7d || b === 0x5d) this.depth--;
      else if ((b === COLON || b === 0x2c) && this.depth === 1) this.last = b;
      i++;
    }
    if (!(this.inString && this.role === 'large')) this.keep(chunk.subarray(from));
    else if (this.heldBytes > (this.options.inlineBytes ?? 0)) this.flushLarge(false);
    this.offset += n;
  }

  /** Throws if the input ended before the value did. */
  end(): unknown {
    if (this.offset === 0) throw new JsonStreamError('empty body', 0);
    if (this.inString || this.depth > 0) {
      throw new JsonStreamError('unexpected end of JSON (the answer was cut short)', this.offset);
    }
    const text = Buffer.concat(this.kept, this.keptBytes).toString('utf8');
    try {
      return JSON.parse(text);
    } catch {
      const problem = locateJsonError(text);
      let at = Buffer.byteLength(text.slice(0, problem.offset));
      for (const splice of this.splices) if (splice.at <= at) at += splice.saved;
      throw new JsonStreamError(problem.reason, at);
    }
  }

  private startString(at: number): void {
    this.inString = true;
    this.escaped = false;
    this.stringStart = at;
    this.role = 'other';
    if (this.depth !== 1 || !this.topIsObject) return;
    if (this.last !== COLON) this.role = 'key';
    else if (this.key !== undefined && this.options.open && this.options.largeFields?.has(this.key)) {
      this.role = 'large';
      this.writer = undefined;
      this.highSurrogate = '';
    }
  }

  /** Where the string ends in `chunk` (its closing quote), searching from `from`; -1 when it goes on. */
  private stringEnd(chunk: Buffer, from: number): number {
    let i = from;
    if (this.escaped) {
      // The byte after a backslash that ended the previous chunk: never the closing quote.
      this.escaped = false;
      i++;
    }
    // The next quote and backslash, each searched again only once passed (long strings have many escapes).
    let quote = -2;
    let slash = -2;
    while (i < chunk.length) {
      if (quote !== -1 && quote < i) quote = chunk.indexOf(QUOTE, i);
      if (slash !== -1 && slash < i) slash = chunk.indexOf(BACKSLASH, i);
      if (slash === -1 || (quote !== -1 && quote < slash)) return quote;
      if (slash + 1 >= chunk.length) {
        this.escaped = true;
        return -1;
      }
      i = slash + 2;
    }
    return -1;
  }

  private keep(bytes: Buffer): void {
    if (bytes.length === 0) return;
    // A copy: a view would keep the whole chunk (mostly a large string's bytes) alive.
    this.kept.push(Buffer.from(bytes));
    this.keptBytes += bytes.length;
  }

  private hold(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.held.push(bytes);
    this.heldBytes += bytes.length;
  }

  private takeHeld(): Buffer {
    const bytes = this.held.length === 1 ? (this.held[0] as Buffer) : Buffer.concat(this.held, this.heldBytes);
    this.held = [];
    this.heldBytes = 0;
    return bytes;
  }

  private decodeHeld(): string | undefined {
    try {
      return JSON.parse(`"${this.takeHeld().toString('utf8')}"`) as string;
    } catch {
      return undefined; // Not a key JSON.parse reads: end() says where the JSON broke.
    }
  }

  /** A large field's value ended (`after` its closing quote): its marker, or the string when short. */
  private endLarge(after: number): void {
    if (this.writer === undefined && this.heldBytes <= (this.options.inlineBytes ?? 0)) {
      this.keep(Buffer.concat([Buffer.from('"'), this.takeHeld(), Buffer.from('"')]));
      return;
    }
    this.flushLarge(true);
    const marker = Buffer.from(JSON.stringify((this.writer as LargeStringWriter).end()));
    this.keep(marker);
    this.splices.push({ at: this.keptBytes, saved: after - this.stringStart - marker.length });
  }

  /** Hands the held bytes of a large string to its writer: all at its end, else up to a safeCut. */
  private flushLarge(final: boolean): void {
    this.writer ??= this.options.open?.(this.key as string);
    const bytes = this.takeHeld();
    const cut = final ? bytes.length : safeCut(bytes, this.escaped);
    this.hold(bytes.subarray(cut));
    if (cut === 0 && !final) return;
    let piece: string;
    try {
      piece = JSON.parse(`"${bytes.toString('utf8', 0, cut)}"`) as string;
    } catch (error) {
      const reason = (error as Error).message.replace(/ in JSON at position \d+.*$/s, '');
      throw new JsonStreamError(`invalid string (${reason})`, this.stringStart);
    }
    this.largeBytes += cut;
    piece = this.highSurrogate + piece;
    this.highSurrogate = '';
    const last = piece.charCodeAt(piece.length - 1);
    if (!final && last >= 0xd800 && last <= 0xdbff) {
      this.highSurrogate = piece.slice(-1);
      piece = piece.slice(0, -1);
    }
    if (piece.length > 0) this.writer?.write(piece);
  }
}

/**
 * How many leading bytes of a string's inside decode on their own: not ending inside an escape sequence
 * (`\`, `\u` and up to four hex digits) or a UTF-8 character. `escaped`: the last byte starts an escape.
 */
function safeCut(bytes: Buffer, escaped: boolean): number {
  let cut = escaped ? bytes.length - 1 : bytes.length;
  for (let k = Math.max(0, cut - 6); k < cut; k++) {
    if (bytes[k] !== BACKSLASH) continue;
    // A backslash after an odd run of backslashes is itself escaped.
    let run = 0;
    for (let j = k - 1; j >= 0 && bytes[j] === BACKSLASH; j--) run++;
    if (run % 2 === 1) continue;
    const length = bytes[k + 1] === 0x75 ? 6 : 2;
    if (k + length > cut) {
      cut = k;
      break;
    }
    k += length - 1;
  }
  for (let k = cut - 1; k >= 0 && k >= cut - 3; k--) {
    const b = bytes[k] as number;
    if (b < 0x80) break;
    if (b >= 0xc0) {
      if (cut - k < (b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2)) cut = k;
      break;
    }
  }
  return cut;
}

/**
 * Byte-level pieces of the streaming JSON reader (json-stream.ts, where its budget row is named): its
 * error, and where a string may be cut.
 */

export const BACKSLASH = 0x5c;

export class JsonStreamError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at byte ${offset}`);
    this.name = 'JsonStreamError';
  }
}

/**
 * How many leading bytes of a string's inside can be decoded on their own: not ending inside an escape
 * sequence (`\`, `\u` and up to four hex digits) or inside a UTF-8 character. `escaped` says the byte
 * after these is escaped (the last byte here is a backslash that starts an escape).
 */
export function safeCut(bytes: Buffer, escaped: boolean): number {
  let cut = bytes.length;
  if (escaped) cut -= 1;
  // An escape started within the last six bytes and not complete: find its backslash.
  for (let k = Math.max(0, cut - 6); k < cut; k++) {
    if (bytes[k] !== BACKSLASH) continue;
    // Is this backslash itself escaped? Count the run of backslashes before it.
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
  // A UTF-8 character cut short: its lead byte and the continuation bytes after it.
  for (let k = cut - 1; k >= 0 && k >= cut - 3; k--) {
    const b = bytes[k] as number;
    if (b < 0x80) break;
    if (b >= 0xc0) {
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      if (cut - k < need) cut = k;
      break;
    }
  }
  return cut;
}

export function unexpected(b: number, at: number, wanted: string): JsonStreamError {
  const shown = b >= 0x20 && b < 0x7f ? `'${String.fromCharCode(b)}'` : `byte 0x${b.toString(16).padStart(2, '0')}`;
  return new JsonStreamError(`unexpected ${shown} where ${wanted} was expected`, at);
}

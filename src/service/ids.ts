import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

// Random bytes are drawn 4 KiB at a time: one call per id would cost a system call per request.
let pool = Buffer.alloc(0);
let offset = 0;

/** Random base62 text. Bytes of 248 and above are dropped so every character is equally likely. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    if (offset >= pool.length) {
      pool = randomBytes(4096);
      offset = 0;
    }
    const byte = pool[offset++] as number;
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

export const newId = (prefix: 'usr' | 'face' | 'doc' | 'thr'): string => `${prefix}_${randomBase62(16)}`;

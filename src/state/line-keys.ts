import { hash } from 'node:crypto';

/**
 * What a line of a batch is known by across runs: its content, not its place. A line's key is the hash
 * of the request body sent for it and its occurrence, the nth time that same body appears in the input
 * (so two identical lines are two keys, each matching one acknowledged document). A line moved, or
 * lines inserted or removed around it, keep their keys; a line edited is a new body, so a new key.
 */

export interface LineKey {
  /** bodyHash of the body sent. */
  hash: string;
  /** 1 for the first line with this body, 2 for the second, ... */
  n: number;
}

/** The hash of a request body, as it is sent: 32 hex digits (128 bits of sha256). */
export function bodyHash(body: string | Uint8Array): string {
  return hash('sha256', body, 'hex').slice(0, 32);
}

/** A key as one string (a Map key, the journal's head). */
export function keyText(key: LineKey): string {
  return key.n === 1 ? key.hash : `${key.hash}.${key.n}`;
}

export interface JournalEntry extends LineKey {
  /** The line it stood on when last submitted or reported. */
  line: number;
  document_id: string;
  token_count: number;
}

/** What an earlier batch acknowledged, found by line key. */
export class Acknowledged {
  private readonly byKey = new Map<string, JournalEntry>();

  add(entry: JournalEntry): void {
    this.byKey.set(keyText(entry), entry);
  }

  get(key: LineKey): JournalEntry | undefined {
    return this.byKey.get(keyText(key));
  }

  get size(): number {
    return this.byKey.size;
  }
}

/** The lines of an input compared with one earlier batch. */
export interface Compared {
  /** Lines compared (valid lines with a key). */
  lines: number;
  /** Of them, lines that batch acknowledged. */
  matched: number;
  /** Of the matched, lines that stood elsewhere then. */
  moved: number;
  /** Lines among the first ones of that batch's input (standard input's read-ahead), not acknowledged. */
  headOnly: number;
}

const WORDS = 4; // per slot: 96 bits of the hash, then the count
const EMPTY_COUNT = 0;

/**
 * How often each body was seen so far: next(hash) gives a line its occurrence. It holds a slot for every
 * distinct body of the input, so it is kept small: 16 bytes a slot in one typed array (open addressing,
 * at most 3/4 full), 21 to 43 bytes a line, where a Map of the hash strings takes about 150 (measured
 * with 5 million distinct lines: 128 MiB here, 758 MiB as a Map). 96 bits of the 128-bit hash tell
 * bodies apart: two bodies of a batch of a billion lines share them with a chance under 10^-10.
 */
export class Occurrences {
  private slots: Uint32Array;
  private mask: number;
  private used = 0;

  constructor(expected = 0) {
    let capacity = 1024;
    while (capacity * 0.75 < expected) capacity *= 2;
    this.slots = new Uint32Array(capacity * WORDS);
    this.mask = capacity - 1;
  }

  /** Counts one more line of this body; returns its occurrence (1 the first time). */
  next(hash: string): number {
    const a = Number.parseInt(hash.slice(0, 8), 16) >>> 0;
    const b = Number.parseInt(hash.slice(8, 16), 16) >>> 0;
    const c = Number.parseInt(hash.slice(16, 24), 16) >>> 0;
    const slots = this.slots;
    for (let i = a & this.mask; ; i = (i + 1) & this.mask) {
      const at = i * WORDS;
      const count = slots[at + 3] as number;
      if (count === EMPTY_COUNT) {
        slots[at] = a;
        slots[at + 1] = b;
        slots[at + 2] = c;
        slots[at + 3] = 1;
        if (++this.used > (this.mask + 1) * 0.75) this.grow();
        return 1;
      }
      if (slots[at] === a && slots[at + 1] === b && slots[at + 2] === c) {
        slots[at + 3] = count + 1;
        return count + 1;
      }
    }
  }

  /** Forgets every count, keeping the room made (a file's second pass counts again from its first line). */
  clear(): void {
    this.slots.fill(0);
    this.used = 0;
  }

  private grow(): void {
    const old = this.slots;
    const capacity = (this.mask + 1) * 2;
    this.slots = new Uint32Array(capacity * WORDS);
    this.mask = capacity - 1;
    for (let at = 0; at < old.length; at += WORDS) {
      if (old[at + 3] === EMPTY_COUNT) continue;
      let i = (old[at] as number) & this.mask;
      while (this.slots[i * WORDS + 3] !== EMPTY_COUNT) i = (i + 1) & this.mask;
      this.slots.set(old.subarray(at, at + WORDS), i * WORDS);
    }
  }
}

import { hash } from 'node:crypto';
import type { DocumentBody } from '../input/documents.js';

/**
 * What a line of a batch is known by across runs: the hash of the document it sends and its occurrence (`n`: the
 * nth line with that document), so a moved line keeps its key, one written in another form (keys reordered, other
 * spacing or escapes) too, and an edited one gets a new one.
 */
export type LineKey = { hash: string; n: number };

/** new: refuse if an earlier run of this input is unfinished; resume: send only what it left; restart. */
export type JournalMode = 'new' | 'resume' | 'restart';

/** 32 hex digits (128 bits of sha256). */
export const bodyHash = (body: string | Uint8Array): string => hash('sha256', body, 'hex').slice(0, 32);

/** The document's fields, each but the last after its length: one text per document, whatever its JSON looks like. */
export const documentHash = ({ alias = '', label = '', perspective, content = '' }: DocumentBody): string => {
  const p = perspective ?? '';
  return bodyHash(`${alias.length}:${alias}${label.length}:${label}${p.length}:${p}${content}`);
};

export const keyText = (key: LineKey): string => (key.n === 1 ? key.hash : `${key.hash}.${key.n}`);

export interface JournalEntry extends LineKey {
  /** The line it stood on when last submitted or reported. */
  line: number;
  document_id: string;
  token_count: number;
}

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

/** An input compared with one earlier batch: `moved` of `matched` stood elsewhere; `headOnly`: only in its head. */
export type Compared = { lines: number; matched: number; moved: number; headOnly: number };

const WORDS = 4; // per slot: 96 bits of the hash, then the count
const EMPTY_COUNT = 0;

/**
 * How often each body was seen so far: next(hash) gives a line its occurrence. One typed array of 16-byte
 * slots (open addressing, at most 3/4 full): 5 million distinct lines take 128 MiB here, 758 MiB as a Map
 * of the hashes. 96 bits tell bodies apart (a clash in a billion lines: under 10^-10).
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

  /** Forgets every count, keeping the room made (for a file's second pass). */
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

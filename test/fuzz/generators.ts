/**
 * Deterministic input generators for the input fuzz run: a seeded PRNG (mulberry32) and builders of
 * random, mutated and known-bad values for the flags, JSON documents, NDJSON batches and message lists
 * the CLI parses. Everything derives from the seed, so a failing case is replayed by its seed and index.
 */

export type Rng = () => number;

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Gen {
  constructor(readonly rng: Rng) {}

  int(min: number, max: number): number {
    return min + Math.floor(this.rng() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.rng() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rng() * items.length)] as T;
  }

  /** A string from an alphabet that includes quotes, commas, separators, controls, non-ASCII and emoji. */
  text(maxLength = 24): string {
    const alphabets = [
      'abcdefghijklmnopqrstuvwxyz',
      'ABCXYZ0123456789-_.',
      ' \t,;:"\'\\/{}[]@=*',
      '\n\r\0\x07\x1b\u2028\u00a0',
      'éß漢字Ω',
      '😀🎉',
    ];
    const length = this.int(0, maxLength);
    let out = '';
    for (let i = 0; i < length; i++) {
      const alphabet = this.pick(alphabets);
      const chars = Array.from(alphabet);
      out += this.pick(chars);
    }
    return out;
  }

  /** Small random edits of a string: insert, delete, replace, duplicate, truncate. */
  mutate(input: string): string {
    let s = input;
    const edits = this.int(1, 3);
    for (let i = 0; i < edits; i++) {
      const at = this.int(0, s.length);
      switch (this.int(0, 4)) {
        case 0:
          s = s.slice(0, at) + this.text(3) + s.slice(at);
          break;
        case 1:
          s = s.slice(0, at) + s.slice(at + this.int(1, 4));
          break;
        case 2:
          s = s.slice(0, at) + this.pick(['"', '{', '}', ',', ':', '[', ']', '\\', 'x', ' ', '\n']) + s.slice(at + 1);
          break;
        case 3:
          s = s.slice(0, at) + s.slice(at, at + this.int(1, 8)) + s.slice(at);
          break;
        default:
          s = s.slice(0, at);
      }
    }
    return s;
  }

  /** A random JSON value (depth-limited). */
  json(depth = 0): unknown {
    const kind = this.int(0, depth > 2 ? 4 : 6);
    switch (kind) {
      case 0:
        return null;
      case 1:
        return this.chance(0.5);
      case 2:
        return this.pick([0, -1, 1.5, 1e300, 365, 366, Number.MAX_SAFE_INTEGER]);
      case 3:
      case 4:
        return this.text(12);
      case 5:
        return Array.from({ length: this.int(0, 3) }, () => this.json(depth + 1));
      default: {
        const out: Record<string, unknown> = {};
        for (let i = this.int(0, 4); i > 0; i--)
          out[this.pick(['alias', 'label', 'content', 'role', 'from', 'x', this.text(6)])] = this.json(depth + 1);
        return out;
      }
    }
  }
}

/** Bytes that are not UTF-8 (a lone continuation byte, an overlong form, a truncated sequence). */
export const INVALID_UTF8: readonly Buffer[] = [
  Buffer.from([0x61, 0x80, 0x62]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0x7b, 0x22, 0xe2, 0x82]),
  Buffer.from([0xff, 0xfe, 0x00]),
];

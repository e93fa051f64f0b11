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

  /** A random JSON value, up to three levels of arrays and objects, with keys the CLI's inputs use. */
  json(): unknown {
    return this.tree(CLI_VALUES, 3);
  }

  /**
   * A random JSON value up to `levels` levels deep: one of the shape's leaves, or (above the last
   * level) an array or an object of random members. Members are defined, not assigned, so a key such as
   * `__proto__` stays an own key of the object.
   */
  tree(shape: TreeShape, levels: number): unknown {
    const leaves = shape.leaves.length;
    const kind = this.int(0, levels <= 0 ? leaves - 1 : leaves + 1);
    if (kind < leaves) return (shape.leaves[kind] as (gen: Gen) => unknown)(this);
    if (kind === leaves) return Array.from({ length: this.int(0, shape.items) }, () => this.tree(shape, levels - 1));
    const out: Record<string, unknown> = {};
    for (let n = this.int(0, shape.members); n > 0; n--) {
      const name = shape.key(this);
      const value = this.tree(shape, levels - 1);
      Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
}

/** What Gen.tree builds from: its leaves (picked evenly), the most items of an array and members of an object. */
export interface TreeShape {
  leaves: readonly ((gen: Gen) => unknown)[];
  items: number;
  members: number;
  key(gen: Gen): string;
}

const CLI_VALUES: TreeShape = {
  leaves: [
    () => null,
    (gen) => gen.chance(0.5),
    (gen) => gen.pick([0, -1, 1.5, 1e300, 365, 366, Number.MAX_SAFE_INTEGER]),
    (gen) => gen.text(12),
    (gen) => gen.text(12),
  ],
  items: 3,
  members: 4,
  key: (gen) => gen.pick(['alias', 'label', 'content', 'role', 'from', 'x', gen.text(6)]),
};

/** Bytes that are not UTF-8 (a lone continuation byte, an overlong form, a truncated sequence). */
export const INVALID_UTF8: readonly Buffer[] = [
  Buffer.from([0x61, 0x80, 0x62]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0x7b, 0x22, 0xe2, 0x82]),
  Buffer.from([0xff, 0xfe, 0x00]),
];

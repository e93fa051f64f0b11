/**
 * gpt-tokenizer's countStringTokens for o200k_base at about twice its speed (docs/decisions.md): a scanner
 * finds the pieces of the library's split expression and probes an open-addressing table with a hash made
 * in place, so a piece that is a token allocates nothing; others go through the library's byte-pair
 * encoder. Used only when the split expression is the one implemented here and SELF_TEST agrees.
 */

/** The parts of gpt-tokenizer's BytePairEncodingCore used here (public at run time). */
export interface BpeCore {
  bytePairStringRankEncoder: Map<string, number>;
  tokenSplitRegex: RegExp;
  bytePairEncode(piece: string): number[];
  setMergeCacheSize?(size: number): void;
}

/** Longer pieces are counted in chunks: byte-pair encoding is quadratic in length (docs/local-service-choices.md). */
export const MAX_PIECE = 512;
/** Characters of over-long pieces counted on the event loop (about 20 ms); beyond, a worker. */
const LONG_INLINE_BUDGET = 8 * MAX_PIECE;

/**
 * Makes `core.bytePairEncode` cut pieces over `max` into chunks (never inside a surrogate pair) and turns
 * the merge cache off. The token workers run this function's source: it refers to nothing outside.
 */
export function chunkLongPieces(core: BpeCore, max = MAX_PIECE): void {
  // That cache (the last 100,000 pieces, a Map trimmed at its oldest entry) slows down as its evictions
  // pile up: 4 MiB of base64, all pieces unlike, took 26 s with it and 3.3 s without.
  core.setMergeCacheSize?.(0);
  const whole = core.bytePairEncode.bind(core);
  core.bytePairEncode = (piece: string): number[] => {
    if (piece.length <= max) return whole(piece);
    const tokens: number[] = [];
    for (let i = 0; i < piece.length;) {
      let end = Math.min(i + max, piece.length);
      const last = piece.charCodeAt(end - 1);
      if (end < piece.length && last >= 0xd800 && last <= 0xdbff) end--;
      for (const token of whole(piece.slice(i, end))) tokens.push(token);
      i = end;
    }
    return tokens;
  };
}

export const O200K_SPLIT =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?" +
  "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?" +
  '|\\p{N}{1,3}' +
  '| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*' +
  '|\\s*[\\r\\n]+' +
  '|\\s+(?!\\S)' +
  '|\\s+';

// The expression's classes a code point belongs to, as bits.
const UP = 1; // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
const LOW = 2; // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
const LETTER = 4; // \p{L}
const NUM = 8; // \p{N}
const SPACE = 16; // \s
const NEWLINE = 32; // \r or \n
const KNOWN = 128;
/** `[^\r\n\p{L}\p{N}]`: the optional character before a word. */
const NOT_PREFIX = NEWLINE | LETTER | NUM;
/** `[^\s\p{L}\p{N}]`: punctuation and symbols. */
const NOT_PUNCT = SPACE | LETTER | NUM;

const CLASSES: [RegExp, number][] = [
  [/^[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]$/u, UP],
  [/^[\p{Ll}\p{Lm}\p{Lo}\p{M}]$/u, LOW],
  [/^\p{L}$/u, LETTER],
  [/^\p{N}$/u, NUM],
  [/^\s$/u, SPACE],
];

function classify(cp: number): number {
  // A lone surrogate is one code point of its own for a `u` expression; String.fromCodePoint keeps it.
  const ch = String.fromCodePoint(cp);
  let flags = KNOWN;
  for (const [expression, flag] of CLASSES) if (expression.test(ch)) flags |= flag;
  if (cp === 10 || cp === 13) flags |= NEWLINE;
  return flags;
}

/** Classes of the Basic Multilingual Plane, filled in as met; others in a map. */
const bmp = new Uint8Array(0x10000);
const astral = new Map<number, number>();
for (let cp = 0; cp < 128; cp++) bmp[cp] = classify(cp);

function flagsOf(cp: number): number {
  if (cp < 0x10000) return bmp[cp] || (bmp[cp] = classify(cp));
  let flags = astral.get(cp);
  if (flags === undefined) astral.set(cp, (flags = classify(cp)));
  return flags;
}

function widthAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 2;
  }
  return 1;
}

function flagsAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 128) return bmp[c] as number;
  return flagsOf(text.codePointAt(i) as number);
}

const CONTRACTION = /'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])/y;

/** `(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?` at `m`: the end after it. */
function contraction(text: string, m: number): number {
  if (text.charCodeAt(m) !== 39) return m;
  CONTRACTION.lastIndex = m;
  return CONTRACTION.test(text) ? CONTRACTION.lastIndex : m;
}

function runEnd(text: string, i: number, flag: number): number {
  const n = text.length;
  while (i < n && (flagsAt(text, i) & flag) !== 0) i += widthAt(text, i);
  return i;
}

/**
 * `[UP]*[LOW]+` from `j` with the expression's backtracking: the end of the match, or -1. The upper
 * run is taken whole; if a LOW character follows, the LOW run from there; otherwise the run gives
 * back characters until one of its own is also LOW (Lm, Lo, M are in both classes), which then ends
 * the match by itself (what follows it in the run is not LOW).
 */
function upperThenLower(text: string, j: number): number {
  const n = text.length;
  let k = j;
  let lastBoth = -1;
  while (k < n) {
    const f = flagsAt(text, k);
    if ((f & UP) === 0) break;
    if ((f & LOW) !== 0) lastBoth = k;
    k += widthAt(text, k);
  }
  if (k < n && (flagsAt(text, k) & LOW) !== 0) return runEnd(text, k, LOW);
  return lastBoth < 0 ? -1 : lastBoth + widthAt(text, lastBoth);
}

function upperRun(text: string, j: number): number {
  const k = runEnd(text, j, UP);
  return k === j ? -1 : runEnd(text, k, LOW);
}

/** The end of the piece that starts at `i`: the first alternative that matches there, as the engine picks it. */
export function pieceEnd(text: string, i: number): number {
  const n = text.length;
  const f0 = flagsAt(text, i);
  const w0 = widthAt(text, i);
  const prefixed = (f0 & NOT_PREFIX) === 0 && i + w0 < n;
  // 1. [^\r\n\p{L}\p{N}]?[UP]*[LOW]+('s...)?   2. [^\r\n\p{L}\p{N}]?[UP]+[LOW]*('s...)?
  // Each with the optional character first, then without it (one call site per helper keeps this
  // function's optimized code small).
  for (let alternative = 1; alternative <= 2; alternative++) {
    for (let j = prefixed ? i + w0 : i; ; j = i) {
      const end = alternative === 1 ? upperThenLower(text, j) : upperRun(text, j);
      if (end >= 0) return contraction(text, end);
      if (j === i) break;
    }
  }
  // 3. \p{N}{1,3}
  if ((f0 & NUM) !== 0) {
    let k = i + w0;
    for (let digits = 1; digits < 3 && k < n && (flagsAt(text, k) & NUM) !== 0; digits++) k += widthAt(text, k);
    return k;
  }
  // 4. ' '?[^\s\p{L}\p{N}]+[\r\n/]*
  const j = text.charCodeAt(i) === 32 ? i + 1 : i;
  if (j < n && (flagsAt(text, j) & NOT_PUNCT) === 0) {
    let k = j + widthAt(text, j);
    while (k < n && (flagsAt(text, k) & NOT_PUNCT) === 0) k += widthAt(text, k);
    while (k < n) {
      const c = text.charCodeAt(k);
      if (c !== 10 && c !== 13 && c !== 47) break;
      k++;
    }
    return k;
  }
  // 5. \s*[\r\n]+ (whitespace up to its last line break)   6. \s+(?!\S)   7. \s+
  // Every \s character is a single UTF-16 unit.
  let k = i;
  let lastNewline = -1;
  while (k < n) {
    const f = flagsAt(text, k);
    if ((f & SPACE) === 0) break;
    if ((f & NEWLINE) !== 0) lastNewline = k;
    k++;
  }
  if (k === i) throw new Error(`no piece of the split expression starts at ${i}`);
  if (lastNewline >= 0) return lastNewline + 1;
  if (k === n) return n;
  return k - i >= 2 ? k - 1 : i + 1;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function hashRange(text: string, a: number, b: number): number {
  let h = FNV_OFFSET;
  for (let t = a; t < b; t++) h = Math.imul(h ^ text.charCodeAt(t), FNV_PRIME);
  return h;
}

/** 1 for ASCII characters that may stand before a word (`[^\r\n\p{L}\p{N}]`). */
const ASCII_PREFIX = new Uint8Array(128);
for (let c = 0; c < 128; c++) ASCII_PREFIX[c] = ((bmp[c] as number) & NOT_PREFIX) === 0 ? 1 : 0;

/** Room in a slot for a token's length (o200k_base's longest has 128). */
const MAX_TOKEN_LENGTH = 255;

/**
 * A set of strings probed by hash without allocation: linear probing, each slot holding the full hash, then
 * (offset << 8 | length) of its characters in one shared array (-1: empty), compared only when the hashes are equal.
 * Null when the strings do not fit (their characters' offsets have 23 bits).
 */
function buildTable(strings: readonly string[]) {
  let size = 1;
  while (size < strings.length * 2) size *= 2;
  const mask = size - 1;
  const slots = new Int32Array(size * 2).fill(-1);
  const total = strings.reduce((sum, s) => sum + s.length, 0);
  if (total >= 1 << 23) return null;
  const chars = new Uint16Array(total);
  let offset = 0;
  for (const s of strings) {
    const h = hashRange(s, 0, s.length);
    let slot = h & mask;
    while (slots[slot * 2 + 1] !== -1) slot = (slot + 1) & mask;
    slots[slot * 2] = h;
    slots[slot * 2 + 1] = (offset << 8) | s.length;
    for (let t = 0; t < s.length; t++) chars[offset + t] = s.charCodeAt(t);
    offset += s.length;
  }
  return { mask, slots, chars };
}

function inTable(
  table: NonNullable<ReturnType<typeof buildTable>>,
  h: number,
  text: string,
  a: number,
  b: number,
): boolean {
  const { mask, slots, chars } = table;
  const length = b - a;
  for (let slot = h & mask; ; slot = (slot + 1) & mask) {
    const entry = slots[slot * 2 + 1] as number;
    if (entry === -1) return false;
    if (slots[slot * 2] !== h || (entry & 0xff) !== length) continue;
    const offset = entry >>> 8;
    let t = 0;
    while (t < length && chars[offset + t] === text.charCodeAt(a + t)) t++;
    if (t === length) return true;
  }
}

/** Tokens of lower rank (the most frequent merges) go in a small table that stays in the CPU's cache. */
const HOT_RANKS = 16_384;

/**
 * Counts with two vocabulary tables; built once per tokenizer (about 30 ms for o200k_base). With `spent`,
 * shared by the texts of one request (a thread's messages), the characters of pieces longer than MAX_PIECE
 * are added to `spent.long`, and once they pass LONG_INLINE_BUDGET the count gives -1 at once: a worker
 * counts the texts (tokens.ts).
 */
export function makeFastCounter(core: BpeCore) {
  if (core.tokenSplitRegex.source !== O200K_SPLIT) return null;
  const hotTokens: string[] = [];
  const coldTokens: string[] = [];
  for (const [token, rank] of core.bytePairStringRankEncoder) {
    if (token.length > MAX_TOKEN_LENGTH) return null;
    (rank < HOT_RANKS ? hotTokens : coldTokens).push(token);
  }
  const hot = buildTable(hotTokens);
  const cold = buildTable(coldTokens);
  if (!hot || !cold) return null;

  // Counts of short pieces that are not tokens. Only short ones: V8 copies a substring of fewer than 13
  // characters, while a longer one would keep the whole document it was cut from alive in this cache.
  const merged = new Map<string, number>();
  const mergedCount = (piece: string): number => {
    if (piece.length > 12) return core.bytePairEncode(piece).length;
    let count = merged.get(piece);
    if (count === undefined) {
      count = core.bytePairEncode(piece).length;
      if (merged.size >= 50_000) merged.clear();
      merged.set(piece, count);
    }
    return count;
  };

  return (text: string, spent?: { long: number }): number => {
    const n = text.length;
    let total = 0;
    for (let i = 0; i < n;) {
      // The common piece, an ASCII word with or without one character before it (` the`, `(see`,
      // `it's`), is found and hashed in one pass, when its letters end at an ASCII character or the
      // end of the text (a character that is not ASCII might continue the word: pieceEnd decides).
      let end = -1;
      let h = FNV_OFFSET;
      const c = text.charCodeAt(i);
      if (c < 128) {
        let j = i;
        if (ASCII_PREFIX[c] === 1) {
          j = i + 1;
          h = Math.imul(h ^ c, FNV_PRIME);
        }
        let m = j;
        let d = 0;
        while (m < n && (d = text.charCodeAt(m)) >= 65 && d <= 90) {
          h = Math.imul(h ^ d, FNV_PRIME);
          m++;
        }
        while (m < n && (d = text.charCodeAt(m)) >= 97 && d <= 122) {
          h = Math.imul(h ^ d, FNV_PRIME);
          m++;
        }
        if (m > j && (m === n || d < 128)) {
          end = m;
          if (d === 39 && m < n) {
            end = contraction(text, m);
            for (let t = m; t < end; t++) h = Math.imul(h ^ text.charCodeAt(t), FNV_PRIME);
          }
        }
      }
      if (end < 0) {
        end = pieceEnd(text, i);
        h = hashRange(text, i, end);
      }
      if (end - i > MAX_PIECE && spent && (spent.long += end - i) > LONG_INLINE_BUDGET) return -1;
      total += inTable(hot, h, text, i, end) || inTable(cold, h, text, i, end) ? 1 : mergedCount(text.slice(i, end));
      i = end;
    }
    return total;
  };
}

/** Texts the counter must count exactly as the library does before it is trusted. */
export const SELF_TEST = [
  "Hello, World! It's the 12345th time; we'LL see... 'quoted' ABCdef DEFs I'M HERE\r\n\r\n  \t x  \n",
  'naïve Zürich façade Ελληνικά русский 日本語の文章 中文 한국어 “quotes” 🎉 𝐀𝐛𝐜 ٣٤٥٦ ²³ Ⅻ',
  'e\u0301 \u0301a A\u0301B \u02b0x \u01c5y \u00a0 \u2028 \u3000x \ufeff\ud800 z\udfff <|endoftext|> a//b\n/\n',
];

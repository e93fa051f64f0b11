import o200k from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, test } from 'vitest';
import { type BpeCore, makeFastCounter, O200K_SPLIT, pieceEnd, SELF_TEST } from '../../src/service/token-count.js';
import { loadTokenizer } from '../../src/service/tokens.js';

/**
 * The service's token counter must give exactly the tokenizer's count (countStringTokens) for every
 * text: its scanner must cut the same pieces as the tokenizer's split expression, and count them alike.
 */

const encoding = o200k as unknown as {
  countStringTokens(text: string): number;
  bytePairEncodingCoreProcessor: BpeCore;
};
const core = encoding.bytePairEncodingCoreProcessor;
const library = (text: string) => encoding.countStringTokens(text);
const fast = makeFastCounter(core);

function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length;) {
    const end = pieceEnd(text, i);
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}
const libraryPieces = (text: string) => [...text.matchAll(core.tokenSplitRegex)].map((m) => m[0]);

// Every class the split expression tells apart, and the characters where its alternatives meet.
const ATOMS = [
  ...'aezAEZ059 \n\r\t\u000b\u000c\'/.,!?-_()"\\#@~`\u0000\u001b\u007f',
  "'s",
  "'S",
  "'ll",
  "'LL",
  "'lL",
  "'ve",
  "'vE",
  "'re",
  "'Re",
  "'d",
  "'M",
  "'t",
  "'x",
  '\r\n',
  '  ',
  '//',
  'ï', // Ll
  'É', // Lu
  'ǅ', // Lt
  'ʰ', // Lm
  '日', // Lo
  'の',
  '\u0301', // Mn
  '\u0903', // Mc
  '\u20dd', // Me
  '٣', // Nd, Arabic-Indic
  '²', // No
  'Ⅻ', // Nl
  '\u00a0', // Zs, \s
  '\u2028', // Zl, \s
  '\u3000',
  '\ufeff',
  '\u200b', // not \s
  '“',
  '€',
  '🎉', // astral symbol
  '𝐀', // astral Lu
  '𝐚', // astral Ll
  '𝟎', // astral Nd
  '\ud800', // lone surrogates
  '\udfff',
  '<|endoftext|>',
  'hello',
  'World',
  'ABC',
  'aBc',
  "It's",
  'naïve',
  'Zürich',
  ' the',
  '1234567',
];

function random(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x / 2 ** 32;
  };
}

describe('token counts', () => {
  test('the split expression is the one the scanner implements', () => {
    expect(fast).not.toBeNull();
    expect(core.tokenSplitRegex.source).toBe(O200K_SPLIT);
  });

  test('the self-test texts', () => {
    for (const text of SELF_TEST) expect(fast?.(text)).toBe(library(text));
  });

  test('random texts of awkward characters: same pieces, same count', () => {
    const rnd = random(20251122);
    for (let r = 0; r < 15_000; r++) {
      const length = 1 + Math.floor(rnd() * 14);
      let text = '';
      for (let i = 0; i < length; i++) text += ATOMS[Math.floor(rnd() * ATOMS.length)];
      const expected = libraryPieces(text);
      const got = pieces(text);
      if (got.join('\u0000') !== expected.join('\u0000')) expect({ text, got }).toEqual({ text, got: expected });
      expect(fast?.(text)).toBe(library(text));
    }
  });

  test('every pair of Basic Multilingual Plane characters of the classes met at a boundary', () => {
    const sample: string[] = [];
    for (let cp = 0; cp < 0x3000; cp += 13) sample.push(String.fromCharCode(cp));
    const around = ['a', 'A', '0', ' ', '\n', "'", '/', '.', '\u0301', '日'];
    for (const a of sample) {
      for (const b of around) {
        for (const text of [a + b, b + a, ` ${a}${b}`, `${a}${a}${b}`]) {
          expect(pieces(text)).toEqual(libraryPieces(text));
        }
      }
    }
  });

  test('prose, code and long texts', async () => {
    const count = await loadTokenizer();
    const texts = [
      'The quick brown fox jumps over the lazy dog. '.repeat(200),
      'function f(x) {\n  return x * 2; // twice\n}\n\n\n\t\tconst URL = "https://example.com/a/b?c=d";\n',
      'Grüße aus Zürich, "quoted" words and 12345 numbers.\n'.repeat(50),
      "Ελληνικά русский 日本語の文章 中文 한국어 “quotes” emoji 🎉🎉🎉 I'M HERE, we'll SEE'S\r\n".repeat(30),
      'x'.repeat(5000),
      ' '.repeat(300) + 'y',
      '\n'.repeat(100),
      'A'.repeat(64) + 'b'.repeat(64),
    ];
    for (const text of texts) expect(count(text)).toBe(library(text));
  });
});

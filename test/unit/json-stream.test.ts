import {
  createWriteStream,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { JsonStreamError, JsonStreamParser } from '../../src/api/json-stream.js';
import { readJsonStream } from '../helpers/read-json-stream.js';
import { LargeStrings } from '../../src/api/large-strings.js';

/**
 * The streaming JSON reader must give what JSON.parse gives for the same bytes, wherever the chunks
 * are cut, keep the named large strings out of the value, and print them back byte for byte.
 */

// Quotes, backslashes, every short escape, control characters, U+2028/U+2029, 2-, 3- and 4-byte
// characters, escaped surrogate pairs, a lone surrogate, a special token, something that looks like JSON.
const TRICKY =
  'Ada said "hi" \\ back\\slash\ttab\r\n\b\f\u0001\u001f\u007f\u2028\u2029naïve 日本語 🎉🎉 ' +
  '\ud83d\ude00 lone \ud800 end <|endoftext|> "content":null, {"a":[1]} / \\u0041 \\\\" ';

const DOCUMENT = {
  document_id: 'doc_1',
  alias: 'ada-lovelace',
  label: 'notes "v2" 日本',
  version: 3,
  content: TRICKY,
  token_count: 12,
  ratio: -1.5e-3,
  synced: false,
  prepare_status: null,
  current_counts: { a: [1, 2, { b: 'c' }], '': true, 'k"ey': 'v\\' },
  tags: [],
  empty: {},
  type: 'document',
};

function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    // A copy: the parser must not depend on chunks sharing one buffer.
    out.push(Buffer.from(bytes.subarray(from, cut)));
    from = cut;
  }
  return out;
}

function parse(chunks: Buffer[], options?: ConstructorParameters<typeof JsonStreamParser>[0]): unknown {
  const parser = new JsonStreamParser(options);
  for (const chunk of chunks) parser.write(chunk);
  return parser.end();
}

async function* iterate(chunks: Buffer[]): AsyncGenerator<Buffer> {
  yield* chunks;
}

/** Reads `chunks` through a LargeStrings set (as the transport does) and prints the value. */
async function throughLarge(
  chunks: Buffer[],
  large: LargeStrings,
): Promise<{ value: Record<string, unknown>; printed: string }> {
  const reading = await large.begin();
  const value = (await readJsonStream(iterate(chunks), reading.options, reading.flush)) as Record<string, unknown>;
  await reading.commit();
  const out = new PassThrough();
  const parts: Buffer[] = [];
  out.on('data', (c: Buffer) => parts.push(c));
  await large.writeJson(out, value);
  return { value, printed: Buffer.concat(parts).toString('utf8') };
}

/** Equal texts; on a difference, shows where instead of both (megabytes) texts. */
function expectSameText(got: string, expected: string): void {
  if (got === expected) return;
  let at = 0;
  while (at < got.length && got[at] === expected[at]) at++;
  const around = (s: string) => JSON.stringify(s.slice(Math.max(0, at - 40), at + 40));
  expect(`${got.length} chars, at ${at}: ${around(got)}`).toBe(
    `${expected.length} chars, at ${at}: ${around(expected)}`,
  );
}

// A private parent for the files of the sets made here: tests in other files make theirs in parallel.
const parent = mkdtempSync(join(tmpdir(), 'facectl-json-stream-test-'));
afterAll(() => rmSync(parent, { recursive: true, force: true }));
const spoolDirs = () => readdirSync(parent).filter((name) => name.startsWith('facectl-response-'));

describe('JsonStreamParser: the value JSON.parse gives', () => {
  const samples = [
    JSON.stringify(DOCUMENT),
    JSON.stringify(DOCUMENT, null, 2),
    ' \r\n\t[1, -0, 2.5e+10, 1E-2, true, false, null, "x", [], {}, [[[]]]] \n',
    '"just a string \\u00e9 \\ud83d\\ude00"',
    '42',
    '-0.5e-7',
    'null',
    '{"__proto__":{"polluted":true},"a":1,"a":2}',
    '{"1":"one","b":"two","0":"zero"}',
  ];

  it('whole, and cut in two at every byte', () => {
    for (const text of samples) {
      const bytes = Buffer.from(text, 'utf8');
      const expected = JSON.parse(text) as unknown;
      expect(parse([bytes])).toEqual(expected);
      for (let cut = 0; cut <= bytes.length; cut++) expect(parse(chunked(bytes, [cut]))).toEqual(expected);
    }
  });

  it('one byte at a time, key order and duplicate keys as JSON.parse', () => {
    for (const text of samples) {
      const bytes = Buffer.from(text, 'utf8');
      const got = parse(
        chunked(
          bytes,
          Array.from({ length: bytes.length }, (_, i) => i),
        ),
      );
      expect(JSON.stringify(got)).toBe(JSON.stringify(JSON.parse(text)));
    }
  });

  it('a "__proto__" key is an own property, not the prototype', () => {
    const got = parse([Buffer.from('{"__proto__":{"polluted":true}}')]) as Record<string, unknown>;
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(Object.keys(got)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('invalid UTF-8 inside a string becomes U+FFFD, as decoding the whole body does', () => {
    const bytes = Buffer.concat([Buffer.from('{"a":"x'), Buffer.from([0xff, 0xe6, 0x97]), Buffer.from('y"}')]);
    const expected = JSON.parse(bytes.toString('utf8')) as unknown;
    for (let cut = 0; cut <= bytes.length; cut++) expect(parse(chunked(bytes, [cut]))).toEqual(expected);
  });
});

describe('JsonStreamParser: not JSON', () => {
  const bad = [
    // nothing, or a value cut short
    ...['', '   ', '{', '{"a"', '{"a":', '{"a":1', '{"a":1,', '{"a":"unterminated'],
    // more after the value
    ...['{"a":1}}', '{"a":1} x'],
    // misplaced commas and colons, unquoted or single-quoted keys
    ...['[1,]', '[,1]', '{"a" 1}', '{a:1}', "{'a':1}"],
    // numbers
    ...['{"a":01}', '{"a":1.}', '{"a":-}', '{"a":+1}', '{"a":.5}', '{"a":NaN}'],
    // literals
    ...['{"a":nul}', '{"a":truex}'],
    // escapes
    ...['{"a":"\\x"}', '{"a":"\\u12"}', '{"a":"\\u12G4"}'],
    // raw control characters in a string, a byte order mark
    ...['{"a":"tab\tinside"}', '{"a":"new\nline"}', '\ufeff{"a":1}'],
  ];

  it('throws JsonStreamError naming the offset, wherever the chunks are cut', () => {
    for (const text of bad) {
      expect(() => JSON.parse(text), text).toThrow();
      const bytes = Buffer.from(text, 'utf8');
      for (let cut = 0; cut <= bytes.length; cut++) {
        let error: unknown;
        try {
          parse(chunked(bytes, [cut]));
        } catch (caught) {
          error = caught;
        }
        expect(error, `${JSON.stringify(text)} cut at ${cut}`).toBeInstanceOf(JsonStreamError);
        expect((error as Error).message).toMatch(/ at byte \d+$/);
      }
    }
  });

  it('every strict prefix of a document is "cut short"', () => {
    const bytes = Buffer.from(JSON.stringify(DOCUMENT), 'utf8');
    for (let end = 0; end < bytes.length; end++) {
      expect(() => parse([bytes.subarray(0, end)])).toThrow(end === 0 ? /empty body/ : /cut short/);
    }
  });

  it('a bad escape or a raw control character inside a large string too', () => {
    for (const inside of ['\\x', '\\u12G4', 'tab\there', 'x'.repeat(5000) + '\\q']) {
      const bytes = Buffer.from(`{"content":"${inside}","a":1}`, 'utf8');
      for (const cut of [0, 5, 12, bytes.length - 8]) {
        const parser = () =>
          parse(chunked(bytes, [cut]), {
            largeFields: new Set(['content']),
            open: () => ({ write() {}, end: () => '' }),
          });
        expect(parser).toThrow(JsonStreamError);
      }
    }
  });
});

describe('large strings', () => {
  const options = (pieces: string[]) => ({
    largeFields: new Set(['content']),
    open: (field: string) => {
      expect(field).toBe('content');
      return { write: (piece: string) => void pieces.push(piece), end: () => '<content>' };
    },
  });

  it('are handed over in pieces that never split a surrogate pair, the rest of the value as JSON.parse', () => {
    const text = JSON.stringify(DOCUMENT);
    const bytes = Buffer.from(text, 'utf8');
    const { content, ...rest } = DOCUMENT;
    for (let cut = 0; cut <= bytes.length; cut++) {
      for (const cuts of [[cut], [cut, Math.min(bytes.length, cut + 3)]]) {
        const pieces: string[] = [];
        const got = parse(chunked(bytes, cuts), options(pieces));
        expect(got).toEqual({ ...rest, content: '<content>' });
        expectSameText(pieces.join(''), content);
        for (const piece of pieces.slice(0, -1)) {
          const last = piece.charCodeAt(piece.length - 1);
          expect(last >= 0xd800 && last <= 0xdbff, `piece ends with a high surrogate (cut ${cut})`).toBe(false);
        }
      }
    }
  });

  it('one byte at a time', () => {
    const bytes = Buffer.from(JSON.stringify({ a: 1, content: TRICKY, z: [TRICKY] }), 'utf8');
    const pieces: string[] = [];
    const got = parse(
      chunked(
        bytes,
        Array.from({ length: bytes.length }, (_, i) => i),
      ),
      options(pieces),
    );
    expect(got).toEqual({ a: 1, content: '<content>', z: [TRICKY] });
    expect(pieces.join('')).toBe(TRICKY);
  });

  it('only top-level string fields of that name: nested ones and other types are parsed as usual', () => {
    const value = { nested: { content: 'inner' }, list: [{ content: 'x' }], content: 7 };
    const pieces: string[] = [];
    expect(parse([Buffer.from(JSON.stringify(value))], options(pieces))).toEqual(value);
    expect(pieces).toEqual([]);
    expect(parse([Buffer.from('["content","x"]')], options(pieces))).toEqual(['content', 'x']);
    expect(parse([Buffer.from('{"content":null}')], options(pieces))).toEqual({ content: null });
  });

  it('a huge one in small chunks is handed over whole, without holding it', () => {
    const content = `${TRICKY.repeat(20_000)}🎉`;
    const bytes = Buffer.from(JSON.stringify({ alias: 'a', content, token_count: 1 }), 'utf8');
    const pieces: string[] = [];
    const parser = new JsonStreamParser(options(pieces));
    let largest = 0;
    for (let at = 0; at < bytes.length; at += 4093) {
      parser.write(Buffer.from(bytes.subarray(at, at + 4093)));
      largest = Math.max(largest, ...pieces.map((p) => p.length));
    }
    expect(parser.end()).toEqual({ alias: 'a', content: '<content>', token_count: 1 });
    expectSameText(pieces.join(''), content);
    expect(pieces.length).toBeGreaterThan(100);
    expect(largest).toBeLessThanOrEqual(4093 + 6);
    expect(parser.largeBytes).toBeGreaterThan(bytes.length - 100);
  });

  it('shorter than inlineBytes: kept as an ordinary string', () => {
    const pieces: string[] = [];
    const got = parse([Buffer.from(JSON.stringify({ content: 'short' }))], { ...options(pieces), inlineBytes: 100 });
    expect(got).toEqual({ content: 'short' });
    expect(pieces).toEqual([]);
  });
});

describe('LargeStrings', () => {
  it('spool: prints the value exactly as JSON.stringify(value, null, 2), wherever the chunks were cut', async () => {
    const text = JSON.stringify(DOCUMENT);
    const bytes = Buffer.from(text, 'utf8');
    const expected = `${JSON.stringify(JSON.parse(text), null, 2)}\n`;
    for (let cut = 0; cut <= bytes.length; cut += 7) {
      const large = new LargeStrings({ fields: ['content'], keep: 'spool', inlineBytes: 0, tmpDir: parent });
      try {
        const { value, printed } = await throughLarge(chunked(bytes, [cut, Math.min(bytes.length, cut + 1)]), large);
        expect(large.has(value.content)).toBe(true);
        expect(value.content).not.toBe(TRICKY);
        expectSameText(printed, expected);
      } finally {
        await large.dispose();
      }
    }
  });

  it('spool: a large document, also when the value was reshaped (as a zod parse does) before printing', async () => {
    const content = `${TRICKY.repeat(30_000)}end`;
    const answer = { document_id: 'doc_1', content, version: 1, extra: { content: 'nested' } };
    const bytes = Buffer.from(JSON.stringify(answer), 'utf8');
    const chunks = chunked(
      bytes,
      Array.from({ length: Math.floor(bytes.length / 65_536) }, (_, i) => (i + 1) * 65_536),
    );
    const large = new LargeStrings({ fields: ['content'], keep: 'spool', tmpDir: parent });
    try {
      const { value } = await throughLarge(chunks, large);
      const reshaped = { type: 'document', ...value, synced: false };
      const out = new PassThrough();
      const parts: Buffer[] = [];
      out.on('data', (c: Buffer) => parts.push(c));
      await large.writeJson(out, reshaped);
      expectSameText(
        Buffer.concat(parts).toString('utf8'),
        `${JSON.stringify({ type: 'document', ...answer, synced: false }, null, 2)}\n`,
      );
    } finally {
      await large.dispose();
    }
  });

  it('spool: printed to a stream on a file descriptor (as stdout is), the same bytes', async () => {
    const content = `${TRICKY.repeat(12_000)}end`;
    const bytes = Buffer.from(JSON.stringify({ id: 1, content }), 'utf8');
    const chunks = chunked(
      bytes,
      Array.from({ length: Math.floor(bytes.length / 50_000) }, (_, i) => (i + 1) * 50_000),
    );
    const large = new LargeStrings({ fields: ['content'], keep: 'spool', tmpDir: parent });
    const dir = mkdtempSync(join(tmpdir(), 'facectl-json-stream-'));
    try {
      const reading = await large.begin();
      const value = await readJsonStream(iterate(chunks), reading.options, reading.flush);
      await reading.commit();
      const path = join(dir, 'out.json');
      const out = createWriteStream(path, { fd: openSync(path, 'w') });
      await large.writeJson(out, value);
      await new Promise<void>((resolve) => out.end(resolve));
      expectSameText(readFileSync(path, 'utf8'), `${JSON.stringify({ id: 1, content }, null, 2)}\n`);
    } finally {
      await large.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('spool: the files are private and removed by dispose()', async () => {
    const before = new Set(spoolDirs());
    const large = new LargeStrings({ fields: ['content'], keep: 'spool', inlineBytes: 0, tmpDir: parent });
    await throughLarge([Buffer.from(JSON.stringify({ content: 'x'.repeat(1000) }))], large);
    const made = spoolDirs().filter((d) => !before.has(d));
    expect(made).toHaveLength(1);
    const dir = join(parent, made[0] as string);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir)).toHaveLength(1);
    for (const file of readdirSync(dir)) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
    await large.dispose();
    expect(existsSync(dir)).toBe(false);
  });

  it('spool: an answer read only in part (abort) leaves nothing behind', async () => {
    const large = new LargeStrings({ fields: ['content'], keep: 'spool', inlineBytes: 0, tmpDir: parent });
    const reading = await large.begin();
    const parser = new JsonStreamParser(reading.options);
    parser.write(Buffer.from(`{"content":"${'y'.repeat(10_000)}`));
    await reading.flush();
    expect(() => parser.end()).toThrow(/cut short/);
    await reading.abort();
    expect(spoolDirs().flatMap((d) => readdirSync(join(parent, d)))).toEqual([]);
    await large.dispose();
    expect(spoolDirs()).toEqual([]);
  });

  it('none: drops the strings, keeps nothing per answer, and refuses to print them', async () => {
    const large = new LargeStrings({ fields: ['content'], keep: 'none', tmpDir: parent });
    const before = spoolDirs().length;
    for (let i = 0; i < 3; i++) {
      const reading = await large.begin();
      const value = (await readJsonStream(
        iterate([Buffer.from(JSON.stringify({ id: i, content: TRICKY }))]),
        reading.options,
        reading.flush,
      )) as Record<string, unknown>;
      await reading.commit();
      expect(value.id).toBe(i);
      expect(large.has(value.content)).toBe(true);
      await expect(large.writeJson(new PassThrough(), value)).rejects.toThrow(/cannot be printed/);
    }
    expect(spoolDirs().length).toBe(before);
    await large.dispose();
  });

  it('writeJson without any large string is JSON.stringify(value, null, 2)', async () => {
    const large = new LargeStrings({ fields: ['content'], keep: 'spool', tmpDir: parent });
    const out = new PassThrough();
    const parts: Buffer[] = [];
    out.on('data', (c: Buffer) => parts.push(c));
    await large.writeJson(out, DOCUMENT);
    expect(Buffer.concat(parts).toString('utf8')).toBe(`${JSON.stringify(DOCUMENT, null, 2)}\n`);
    await large.dispose();
  });
});

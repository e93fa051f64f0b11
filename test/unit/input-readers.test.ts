import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { documentCreateRequest } from '../../src/contract/documents.js';
import { UsageError } from '../../src/errors.js';
import { detectDocumentFormat, readJsonDocument } from '../../src/input/documents.js';
import { type NdjsonLine, readNdjsonDocuments } from '../../src/input/ndjson.js';
import { locateJsonError, parseJson } from '../../src/input/json.js';
import { readJsonObjectFlag } from '../../src/input/json-flag.js';
import { readLines } from '../../src/input/lines.js';
import { validateMessageList } from '../../src/input/messages.js';
import { fileSource, readSourceText, stdinSource } from '../../src/input/source.js';
import { findInvalidUtf8 } from '../../src/input/utf8.js';
import { createTestContext } from '../helpers/test-context.js';

const dir = mkdtempSync(join(tmpdir(), 'facectl-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

async function* chunks(...parts: (string | Buffer)[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield Buffer.from(part);
}
async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
async function usageMessage(promise: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('files (case 7): every bad path is exit 2 naming the path', () => {
  it('a missing file', async () => {
    const path = join(dir, 'nope.txt');
    expect(await usageMessage(fileSource(path))).toBe(`cannot read ${path}: no such file`);
  });

  it('a directory', async () => {
    const path = join(dir, 'a-dir');
    mkdirSync(path);
    expect(await usageMessage(fileSource(path))).toBe(`cannot read ${path}: it is a directory`);
  });

  it('a path through a file', async () => {
    const path = `${file('plain.txt', 'x')}/child`;
    expect(await usageMessage(fileSource(path))).toBe(`cannot read ${path}: a part of the path is not a directory`);
  });

  it('an empty file', async () => {
    const path = file('empty.txt', '');
    expect(await usageMessage(fileSource(path))).toBe(`${path} is empty`);
  });

  it('invalid UTF-8, with the line of the first bad byte', async () => {
    const path = file(
      'latin1.txt',
      Buffer.concat([Buffer.from('fine\nstill fine\ncaf'), Buffer.from([0xe9]), Buffer.from('\n')]),
    );
    const message = await usageMessage(readSourceText(await fileSource(path)));
    expect(message).toBe(`${path}: line 3: not valid UTF-8 text (byte 0xe9)`);
  });

  it('reads a good file as text, keeping every byte', async () => {
    const text = 'Ada «Lovelace» 🚀\r\nline "two"\n';
    expect(await readSourceText(await fileSource(file('good.txt', text)))).toBe(text);
  });

  it('finds the first bad byte: overlong, surrogate, truncated', () => {
    expect(findInvalidUtf8(Buffer.from([0x61, 0xc0, 0x80]))).toBe(1);
    expect(findInvalidUtf8(Buffer.from([0xed, 0xa0, 0x80]))).toBe(0);
    expect(findInvalidUtf8(Buffer.from([0x61, 0x62, 0xe2, 0x82]))).toBe(2);
    expect(findInvalidUtf8(Buffer.from('ok ✓ 🚀'))).toBe(Buffer.byteLength('ok ✓ 🚀'));
  });
});

describe('standard input (case 10)', () => {
  it('is refused at once when it is a terminal, with how to fix it', async () => {
    const tc = createTestContext({ stdinIsTTY: true });
    let error: unknown;
    try {
      stdinSource(tc.ctx, 'pipe it in');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe('expected input on standard input, but standard input is a terminal');
    expect((error as UsageError).hint).toBe('pipe it in');
  });

  it('empty standard input is refused naming it', async () => {
    const tc = createTestContext({ stdin: '' });
    expect(await usageMessage(readSourceText(stdinSource(tc.ctx, '')))).toBe('standard input is empty');
  });
});

describe('JSON errors name the source, line and column (case 8)', () => {
  it.each([
    ['{"alias": "ada",\n "content": "x"', 2, 16, /the text ends where ',' or '}' was expected/],
    ['{"alias": "ada",\n "content": "x', 2, 13, /a string is not closed/],
    ['{"alias": "ada"} trailing', 1, 18, /after the JSON value/],
    ['{\n  "alias": "ada",\n  "label": oops\n}', 3, 12, /where a value was expected/],
    ['[1, 2,]', 1, 7, /where a value was expected/],
    ['{"a": "tab\there"}', 1, 11, /control character/],
    ['', 1, 1, /the text ends/],
  ])('%j -> line %i, column %i', (text, line, column, reason) => {
    let message = '';
    try {
      parseJson(text, { source: 'doc.json' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(new RegExp(`^doc\\.json: line ${line}, column ${column}: invalid JSON: `));
    expect(message).toMatch(reason);
  });

  it('the scanner agrees with JSON.parse on valid input', () => {
    expect(locateJsonError('{"a": [1, 2.5e3, true, null, "x\\u00e9"]} x').reason).toBe(
      'unexpected text after the JSON value',
    );
  });
});

describe('the streaming line reader', () => {
  it('numbers lines across chunk boundaries, CRLF and a last line without newline', async () => {
    const snowman = Buffer.from('☃');
    const lines = await collect(
      readLines(
        chunks(
          'one\r\ntw',
          'o\n\n',
          Buffer.concat([Buffer.from('thr'), snowman.subarray(0, 1)]),
          snowman.subarray(1),
          'ee\nfour',
        ),
        'x.ndjson',
      ),
    );
    expect(lines.map(({ number, text }) => ({ number, text }))).toEqual([
      { number: 1, text: 'one' },
      { number: 2, text: 'two' },
      { number: 3, text: '' },
      { number: 4, text: 'thr☃ee' },
      { number: 5, text: 'four' },
    ]);
    // Each line's bytes too, without the terminator (a batch may send them as they are).
    expect(lines.map((l) => l.bytes?.toString('utf8'))).toEqual(['one', 'two', '', 'thr☃ee', 'four']);
  });

  it('reports a line that is not UTF-8 and keeps reading', async () => {
    const lines = await collect(readLines(chunks('a\n', Buffer.from([0x62, 0xff, 0x0a]), 'c\n'), 'x.ndjson'));
    expect(lines.map((l) => [l.number, l.text, l.error?.message])).toEqual([
      [1, 'a', undefined],
      [2, '', 'x.ndjson: line 2: not valid UTF-8 text (byte 0xff)'],
      [3, 'c', undefined],
    ]);
  });

  it('refuses a line longer than the limit without buffering the rest', async () => {
    const message = await usageMessage(
      collect(readLines(chunks('ok\n', 'x'.repeat(40), 'y'.repeat(40)), 'big.ndjson', 50)),
    );
    expect(message).toBe("big.ndjson: line 2: longer than 50 bytes, the service's request size limit");
  });
});

describe('docs submit input kinds', () => {
  const detect = async (...parts: string[]) => {
    const found = await detectDocumentFormat(chunks(...parts), 'in');
    return { format: found.format, bytes: Buffer.concat(await collect(found.chunks)).toString() };
  };

  it('detects text, one JSON document (one line or pretty) and NDJSON, replaying every byte', async () => {
    expect(await detect('  Hello {not json}\n')).toEqual({ format: 'text', bytes: '  Hello {not json}\n' });
    expect(await detect('{"content": "x"}')).toEqual({ format: 'json', bytes: '{"content": "x"}' });
    expect(await detect('{"content": "x"}\n\n  \n')).toEqual({ format: 'json', bytes: '{"content": "x"}\n\n  \n' });
    expect(await detect('{\n  "content": "x"\n}\n')).toEqual({ format: 'json', bytes: '{\n  "content": "x"\n}\n' });
    expect(await detect('\n {"a":1}\n', '{"a":2}\n')).toEqual({ format: 'ndjson', bytes: '\n {"a":1}\n{"a":2}\n' });
    expect(await detect('{"a":', '1}\n{"a"', ':2}')).toEqual({ format: 'ndjson', bytes: '{"a":1}\n{"a":2}' });
    expect((await detect('')).format).toBe('text');
  });

  it('looks past a byte order mark at the start (as some editors save UTF-8)', async () => {
    expect(await detect('\ufeff{"a":1}\n{"a":2}\n')).toEqual({ format: 'ndjson', bytes: '\ufeff{"a":1}\n{"a":2}\n' });
    expect((await detect('\ufeff{"content": "x"}\n')).format).toBe('json');
    // The mark in a chunk of its own, and a mark followed by text.
    expect((await detect('\ufeff'.slice(0, 1), '{"a":1}\n{"a":2}')).format).toBe('ndjson');
    expect((await detect('\ufeffHello')).format).toBe('text');
  });

  it('a JSON document is completed from the flags; the JSON wins where both give a field', async () => {
    const doc = await readJsonDocument(chunks('{"content": "Hi", "label": "from json"}'), 'doc.json', {
      alias: 'ada-lovelace',
      label: 'from flag',
      perspective: 'first-person',
    });
    expect(doc).toEqual({ alias: 'ada-lovelace', content: 'Hi', label: 'from json', perspective: 'first-person' });
  });

  it('a JSON document of thousands of unknown fields: the first ten are named, then how many more', async () => {
    const doc = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 1]));
    const message = await usageMessage(
      readJsonDocument(chunks(JSON.stringify({ ...doc, content: 'Hi' })), 'many.json', { alias: 'abc', label: 'l' }),
    );
    expect(message).toMatch(/^many\.json: unknown fields "k0", "k1", .*"k9", and 49990 more \(a document is /);
    expect(message.length).toBeLessThan(300);
  });

  it('a JSON document missing a field, or with an unknown one, is refused naming the file', async () => {
    expect(await usageMessage(readJsonDocument(chunks('{"content": "Hi"}'), 'doc.json', {}))).toBe(
      'doc.json: alias: required (give it in the JSON or with --alias); label: required (give it in the JSON or with --label)',
    );
    expect(
      await usageMessage(
        readJsonDocument(chunks('{"content": "Hi", "title": "x"}'), 'doc.json', { alias: 'abc', label: 'l' }),
      ),
    ).toMatch(/^doc\.json: unknown field "title"/);
    expect(await usageMessage(readJsonDocument(chunks('[1]'), 'doc.json', {}))).toMatch(
      /^doc\.json: holds a JSON array of 1 item; one document is one JSON object/,
    );
    expect(await usageMessage(readJsonDocument(chunks('42'), 'doc.json', {}))).toMatch(
      /^doc\.json: line 1: expected a JSON object .*found a number$/,
    );
  });

  it('NDJSON lines carry their line numbers; a bad line in the middle is reported, the others still parse', async () => {
    const lines = await collect(
      readNdjsonDocuments(
        chunks(
          '{"content": "one"}\n',
          '\n',
          '{"content": "two", "alias": ""}\n',
          '{"content": "thr\n',
          '[]\n',
          '{"content": "five", "perspective": "second-person"}\n',
          '{"content": "six"} trailing\n',
          '{"content": "seven", "label": "own"}',
        ),
        'batch.ndjson',
        { alias: 'ada', label: 'default' },
      ),
    );
    expect(lines.map((l) => [l.line, l.error ?? l.document])).toEqual([
      [1, { alias: 'ada', content: 'one', label: 'default' }],
      [3, expect.stringMatching(/^alias: must not be empty/)],
      [4, expect.stringMatching(/^column 13: invalid JSON: a string is not closed/)],
      [5, 'expected a JSON object (a document is {"alias", "content", "label", "perspective"}), found an array'],
      [6, 'perspective: must be one of first-person, third-person'],
      [7, expect.stringMatching(/^column 20: invalid JSON: unexpected text after the JSON value/)],
      [8, { alias: 'ada', content: 'seven', label: 'own' }],
    ]);
  });

  it("each line's request text is the API client's serialization of it, and does not depend on the field order", async () => {
    // docs submit serializes each line once and sends and hashes that text (the Idempotency-Key, the
    // resume record); it must be the very body the client would make of the document.
    const text = [
      '{"label": "b", "content": "x \\"q\\" ✓", "alias": "ada-two"}',
      '{"content": "defaults"}',
      '{"perspective": null, "content": "null perspective", "alias": "ada-three"}',
      '{"content": "first", "perspective": "first-person", "label": "own"}',
      '',
      '{"alias": "ada", "content": "🎉 naïve 日本 \\u2028 \\ud83c\\udf89", "label": "l", "perspective": "third-person"}',
      '{"content": "defaults", "label": "default", "alias": "ada"}',
    ].join('\n');
    const defaults = { alias: 'ada', label: 'default' };
    const lines = await collect(readNdjsonDocuments(chunks(text), 'batch.ndjson', defaults));
    expect(lines).toHaveLength(6);
    const ok = (line: NdjsonLine | undefined) => {
      if (line === undefined || line.error !== undefined) throw new Error(`not a document: ${line?.error}`);
      return line;
    };
    for (const line of lines.map(ok)) {
      const sent = JSON.stringify(line.document);
      expect(sent).toBe(JSON.stringify(documentCreateRequest.parse(line.document)));
      // The body sent is the line's own bytes, or else that text: either way the same document.
      expect(documentCreateRequest.parse(JSON.parse(line.body.toString()))).toEqual(
        documentCreateRequest.parse(line.document),
      );
    }
    // A line with all its fields is sent as it is; one the flags complete, as the client's text of it,
    // with no perspective filled in (the seed leaves that endpoint's default "not shown").
    expect(ok(lines[0]).body.toString()).toBe('{"label": "b", "content": "x \\"q\\" ✓", "alias": "ada-two"}');
    expect(ok(lines[1]).body).toBe('{"alias":"ada","content":"defaults","label":"default"}');
    expect(JSON.stringify(ok(lines[0]).document)).toBe('{"alias":"ada-two","content":"x \\"q\\" ✓","label":"b"}');
    // Lines 2 and 7 differ only in their field order: the same document.
    expect(JSON.stringify(ok(lines[5]).document)).toBe(ok(lines[1]).body);
  });
});

describe('message lists (case 9)', () => {
  const refused = (value: unknown) => {
    try {
      validateMessageList(value, 'messages.json', String);
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    }
    throw new Error('expected a usage error');
  };
  const ok = { role: 'user', content: 'Hello', from: 'Charles' };

  it('accepts a bare array and {"messages": [...]}', () => {
    expect(validateMessageList([ok], 'm', String)).toEqual([ok]);
    expect(validateMessageList({ messages: [ok, { ...ok, content: '' }] }, 'm', String)).toHaveLength(2);
    expect(validateMessageList([], 'm', String)).toEqual([]);
  });

  it('names the index and field of each problem', () => {
    expect(refused([ok, ok, ok, { role: 'user', content: 'x' }])).toBe('messages.json: messages[3].from: required');
    expect(refused([ok, { role: 'user', content: 'x', name: 'Ada' }])).toBe(
      'messages.json: messages[1].from: required (responses call it "name"; send it as "from")',
    );
    expect(refused([ok, 'hello'])).toBe(
      'messages.json: messages[1]: expected an object {role, content, from}, found a string',
    );
    expect(refused([{ ...ok, role: 7 }])).toBe('messages.json: messages[0].role: must be a string, found a number');
    expect(refused([{ ...ok, extra: 1 }])).toBe(
      'messages.json: messages[0]: unknown field "extra" (a message has role, content and from)',
    );
    expect(refused([{}, null])).toBe(
      [
        'messages.json: 4 problems in the message list:',
        '  messages[0].role: required',
        '  messages[0].content: required',
        '  messages[0].from: required',
        '  messages[1]: expected an object {role, content, from}, found null',
      ].join('\n'),
    );
  });

  it('refuses what is not a list', () => {
    expect(refused({ msgs: [] })).toMatch(/found an object without "messages"/);
    expect(refused({ messages: {} })).toBe('messages.json: messages: expected an array, found an object');
    expect(refused('hi')).toMatch(/found a string$/);
    expect(refused({ messages: [], thread: 1 })).toBe('messages.json: unknown field "thread" beside "messages"');
  });
});

describe('JSON flags: inline, @file, - (stdin)', () => {
  it('reads each form; errors name the flag or the file', async () => {
    const tc = createTestContext({ stdin: '{"born": 1815}' });
    expect(await readJsonObjectFlag(tc.ctx, '--basic-facts', '{"a": 1}')).toEqual({ a: 1 });
    expect(await readJsonObjectFlag(tc.ctx, '--basic-facts', `@${file('facts.json', '{"b": [2]}')}`)).toEqual({
      b: [2],
    });
    expect(await readJsonObjectFlag(tc.ctx, '--basic-facts', '-')).toEqual({ born: 1815 });
    expect(await usageMessage(readJsonObjectFlag(tc.ctx, '--basic-facts', '{"a": }'))).toBe(
      '--basic-facts: line 1, column 7: invalid JSON: unexpected "}" where a value was expected',
    );
    expect(await usageMessage(readJsonObjectFlag(tc.ctx, '--basic-facts', '[1]'))).toMatch(
      /^--basic-facts: line 1: expected a JSON object, found an array/,
    );
    const missing = join(dir, 'missing.json');
    expect(await usageMessage(readJsonObjectFlag(tc.ctx, '--basic-facts', `@${missing}`))).toBe(
      `cannot read ${missing}: no such file`,
    );
  });
});

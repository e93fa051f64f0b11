import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SPOOL_MEMORY_BYTES, streamTextBody } from '../../src/input/document-input.js';
import { requestCount, runCommand } from '../helpers/command-harness.js';
import { useService, useTempFiles } from '../helpers/service-suite.js';

/**
 * `docs submit` of a text document streams the body (the content escaped into the JSON chunk by
 * chunk): what the service stores must be the input, byte for byte, sent once.
 */

// Quotes, backslashes, control characters, U+2028, 2-, 3- and 4-byte characters, a special token.
const TRICKY = 'Ada said "hi" \\ back\\slash\ttab\r\n\u0001\u2028naïve 日本語 🎉🎉 <|endoftext|> "content":null\n';

const service = useService({}, { faces: ['ada-lovelace'] });
const { dir, file } = useTempFiles('facectl-stream-');

const storedByLabel = (label: string) => [...service.store.values('documents')].filter((d) => d.label === label);
const submitArgs = (label: string, ...rest: string[]) => [
  'docs',
  'submit',
  '--alias',
  'ada-lovelace',
  '--label',
  label,
  '--json',
  ...rest,
];

async function collect(chunks: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts).toString('utf8');
}

async function* split(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

describe('streamTextBody', () => {
  it('gives the same JSON document whatever the chunk boundaries (characters split across chunks)', async () => {
    const bytes = Buffer.from(TRICKY, 'utf8');
    for (let size = 1; size <= 9; size++) {
      const text = await collect(
        streamTextBody({ alias: 'ada-lovelace', label: 'x "y"' }, split(bytes, size), 'input', 1 << 20),
      );
      expect(JSON.parse(text)).toEqual({ alias: 'ada-lovelace', label: 'x "y"', content: TRICKY });
    }
  });

  it('refuses invalid UTF-8 and input over the limit', async () => {
    const bad = Buffer.concat([Buffer.from('ok\nstill ok\n'), Buffer.from([0xc3, 0x28])]);
    await expect(collect(streamTextBody({ alias: 'a', label: 'b' }, split(bad, 4), 'in', 1 << 20))).rejects.toThrow(
      /not valid UTF-8/,
    );
    await expect(
      collect(streamTextBody({ alias: 'a', label: 'b' }, split(Buffer.from('x'.repeat(100)), 10), 'in', 50)),
    ).rejects.toThrow(/larger than/);
  });
});

describe('docs submit: a streamed text document', () => {
  it('from a file: stored byte-exact, in one request', async () => {
    // About 1.5 MiB: many read chunks, with multi-byte characters across their boundaries.
    const content = `${TRICKY.repeat(12_000)}end`;
    const path = file('big.txt', content);
    const before = requestCount(service);
    const res = await runCommand(service, submitArgs('stream-file', '--file', path));
    expect(res.code).toBe(0);
    expect(requestCount(service) - before).toBe(1);
    const docs = storedByLabel('stream-file');
    expect(docs).toHaveLength(1);
    expect(docs[0]?.content).toBe(content);
    expect(JSON.parse(res.stdout).document_id).toBe(docs[0]?.id);
  });

  it('from standard input: stored byte-exact, in one request', async () => {
    const content = `${TRICKY.repeat(3000)}fin`;
    const before = requestCount(service);
    const res = await runCommand(service, submitArgs('stream-stdin', '--format', 'text', '-'), {
      stdin: Buffer.from(content, 'utf8'),
    });
    expect(res.code).toBe(0);
    expect(requestCount(service) - before).toBe(1);
    expect(storedByLabel('stream-stdin').map((d) => d.content)).toEqual([content]);
  });

  it('a file that is not UTF-8 is refused before anything is sent', async () => {
    const path = file('latin1.txt', Buffer.concat([Buffer.from('fine\n'.repeat(100_000)), Buffer.from([0xe9, 0x0a])]));
    const before = requestCount(service);
    const res = await runCommand(service, submitArgs('stream-bad', '--file', path));
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/not valid UTF-8/);
    expect(requestCount(service)).toBe(before);
    expect(storedByLabel('stream-bad')).toHaveLength(0);
  });

  it('standard input over the in-memory part: spooled to a private file, sent byte-exact, then removed', async () => {
    const spool = mkdtempSync(join(dir, 'tmp-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = spool;
    try {
      // 6 MiB and more: past SPOOL_MEMORY_BYTES, so it goes through the temporary file.
      const content = `${TRICKY.repeat(Math.ceil((6 * 1024 * 1024) / TRICKY.length))}end`;
      expect(Buffer.byteLength(content)).toBeGreaterThan(SPOOL_MEMORY_BYTES);
      const before = requestCount(service);
      const res = await runCommand(service, submitArgs('stream-spooled', '--format', 'text', '-'), {
        stdin: Buffer.from(content, 'utf8'),
      });
      expect(res.code).toBe(0);
      expect(requestCount(service) - before).toBe(1);
      expect(storedByLabel('stream-spooled').map((d) => d.content === content)).toEqual([true]);
      expect(readdirSync(spool)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  it.each([
    ['small', 1],
    ['spooled', 8 * 1024 * 1024],
  ])(
    '%s standard input that is not UTF-8 is refused (exit 2, naming the line) before anything is sent',
    async (_, size) => {
      const spool = mkdtempSync(join(dir, 'tmp-'));
      const saved = process.env.TMPDIR;
      process.env.TMPDIR = spool;
      try {
        const good = Buffer.from('ok line\n'.repeat(Math.ceil(size / 8)));
        const lines = good.toString().split('\n').length;
        const before = requestCount(service);
        const res = await runCommand(service, submitArgs('stream-bad-stdin', '--format', 'text', '-'), {
          stdin: Buffer.concat([good, Buffer.from([0x61, 0xff, 0x62, 0x0a])]),
        });
        expect(res.code).toBe(2);
        expect(res.stderr).toMatch(/standard input/);
        expect(res.stderr).toMatch(/not valid UTF-8/);
        expect(res.stderr).toContain(`line ${lines}`);
        expect(requestCount(service)).toBe(before);
        expect(storedByLabel('stream-bad-stdin')).toHaveLength(0);
        expect(readdirSync(spool)).toEqual([]);
      } finally {
        if (saved === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = saved;
      }
    },
  );

  it('empty standard input is refused before anything is sent', async () => {
    const before = requestCount(service);
    const res = await runCommand(service, submitArgs('stream-empty', '--format', 'text', '-'), { stdin: '' });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/empty/);
    expect(requestCount(service)).toBe(before);
  });
});

describe('docs submit: an NDJSON batch', () => {
  const docs = Array.from({ length: 300 }, (_, i) => ({
    alias: 'ada-lovelace',
    label: `batch-stream-${String(i).padStart(3, '0')}`,
    content: `${i} ${TRICKY.repeat((i % 7) + 1)}`,
  }));
  const body = `${docs.map((d) => JSON.stringify(d)).join('\n')}\n`;
  const storedBatch = () =>
    [...service.store.values('documents')]
      .filter((d) => d.label.startsWith('batch-stream-'))
      .sort((a, b) => a.label.localeCompare(b.label));

  it.each(['file', 'stdin'] as const)('from %s: every document sent once, in full, byte-exact', async (from) => {
    for (const d of storedBatch()) service.store.del('documents', d.id);
    const path = file('batch.ndjson', body);
    const args = ['docs', 'submit', '--concurrency', '16', '--json', ...(from === 'file' ? ['--file', path] : ['-'])];
    const before = requestCount(service);
    const res = await runCommand(service, args, from === 'stdin' ? { stdin: body } : {});
    expect(res.code).toBe(0);
    expect(requestCount(service) - before).toBe(docs.length);
    const results = res.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(results.map((r) => r.line).sort((a, b) => a - b)).toEqual(docs.map((_, i) => i + 1));
    expect(storedBatch().map((d) => ({ alias: d.alias, label: d.label, content: d.content }))).toEqual(docs);
  });

  it('from a file too large to keep between the passes (over 16 MiB): read twice, each document sent once', async () => {
    for (const d of storedBatch()) service.store.del('documents', d.id);
    // Small documents, each line padded with spaces after its JSON value, so the file is large.
    const padding = ' '.repeat(60 * 1024);
    const path = file('batch-large.ndjson', `${docs.map((d) => `${JSON.stringify(d)}${padding}`).join('\n')}\n`);
    expect(statSync(path).size).toBeGreaterThan(16 * 1024 * 1024);
    const before = requestCount(service);
    const res = await runCommand(service, ['docs', 'submit', '--concurrency', '16', '--json', '--file', path]);
    expect(res.code, res.stderr).toBe(0);
    expect(requestCount(service) - before).toBe(docs.length);
    expect(res.stdout.trim().split('\n')).toHaveLength(docs.length);
    expect(storedBatch().map((d) => ({ alias: d.alias, label: d.label, content: d.content }))).toEqual(docs);
  });
});

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiClientOptions, createApiClient } from '../../src/api/client.js';
import { LargeStrings } from '../../src/api/large-strings.js';
import { documentBody } from '../helpers/seed-bodies.js';
import { routes } from '../../src/contract/index.js';
import { ApiError, ResponseError } from '../../src/errors.js';
import { type FaultServer, json, startFaultServer } from '../helpers/fault-server.js';
import { failure } from '../helpers/unit-harness.js';

/**
 * CallOptions.largeStrings: the answer is parsed as it arrives and the named strings (a document's
 * echoed content) are kept out of memory; the command can still print the answer byte for byte.
 */

const KEY = 'fcs_abcdefgh_0123456789abcdefghijABCDEFGHIJ';
const CONTENT = `${'Ada said "hi" \\ naïve 日本語 🎉 \u2028\u0001\n'.repeat(20_000)}end`;

function documentAnswer(content: string) {
  return documentBody({
    alias: 'ada-lovelace',
    label: 'notes',
    content,
    token_count: 42,
    tokens_limit: 1000,
    extra_field: { content: 'nested, kept' },
  });
}

/** Writes a JSON answer in small pieces, cutting multi-byte characters and escapes. */
async function trickle(res: ServerResponse, body: unknown, piece = 3001): Promise<void> {
  const bytes = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(201, { 'content-type': 'application/json' });
  for (let at = 0; at < bytes.length; at += piece) {
    if (!res.write(bytes.subarray(at, at + piece))) await new Promise((resolve) => res.once('drain', resolve));
  }
  res.end();
}

let server: FaultServer;
const clients: { close(): Promise<void> }[] = [];
const sets: LargeStrings[] = [];

function client(overrides: Partial<ApiClientOptions> = {}) {
  const made = createApiClient({ baseUrl: server.baseUrl, apiKey: KEY, sleep: async () => {}, ...overrides });
  clients.push(made);
  return made;
}

function largeStrings(keep: 'none' | 'spool'): LargeStrings {
  const set = new LargeStrings({ fields: ['content'], keep, tmpDir: parent });
  sets.push(set);
  return set;
}

async function printed(set: LargeStrings, value: unknown): Promise<string> {
  const out = new PassThrough();
  const parts: Buffer[] = [];
  out.on('data', (c: Buffer) => parts.push(c));
  await set.writeJson(out, value);
  return Buffer.concat(parts).toString('utf8');
}

// A private parent for the files of the sets made here: tests in other files make theirs in parallel.
const parent = mkdtempSync(join(tmpdir(), 'facectl-large-strings-test-'));
afterAll(() => rmSync(parent, { recursive: true, force: true }));
const spoolFiles = () => readdirSync(parent).flatMap((dir) => readdirSync(join(parent, dir)));

const body = { alias: 'ada-lovelace', label: 'notes', content: 'x' };

beforeEach(async () => {
  server = await startFaultServer();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(sets.splice(0).map((s) => s.dispose()));
  await server.close();
});

describe('CallOptions.largeStrings', () => {
  it('spool: the content is not in the value, the answer prints as JSON.stringify(parsed, null, 2)', async () => {
    server.handle((_req, res) => trickle(res, documentAnswer(CONTENT)));
    const set = largeStrings('spool');
    const held = await client().call(routes.createDocument, { body });
    const streamed = await client().call(routes.createDocument, { body }, { largeStrings: set });
    expect(held.content).toBe(CONTENT);
    expect(set.has(streamed.content)).toBe(true);
    expect(streamed.content?.length).toBeLessThan(100);
    // The answer was checked and completed by the contract as usual (type's default, extra fields kept).
    expect({ ...streamed, content: CONTENT }).toEqual(held);
    expect(streamed.type).toBe('document');
    expect(await printed(set, streamed)).toBe(`${JSON.stringify(held, null, 2)}\n`);
  });

  it('none: the content is dropped, the other fields are read', async () => {
    server.handle((_req, res) => trickle(res, documentAnswer(CONTENT)));
    const set = largeStrings('none');
    for (let i = 0; i < 3; i++) {
      const doc = await client().call(routes.createDocument, { body }, { largeStrings: set });
      expect(doc.document_id).toBe('doc_1');
      expect(doc.token_count).toBe(42);
      expect(set.has(doc.content)).toBe(true);
    }
  });

  it('a short content stays an ordinary string (spool)', async () => {
    server.handle((_req, res) => json(res, 201, documentAnswer('short')));
    const doc = await client().call(routes.createDocument, { body }, { largeStrings: largeStrings('spool') });
    expect(doc.content).toBe('short');
  });

  it('a 2xx answer that is not JSON: the same error as when the answer is read whole', async () => {
    const answers: [string, string][] = [
      ['application/json', '{"document_id": "doc_1", "content": "cut'],
      ['application/json', '<html>Welcome to nginx!</html>'],
      ['application/json', ''],
      ['text/html', '<html><body>Welcome to nginx!</body></html>'],
    ];
    for (const [type, text] of answers) {
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': type });
        res.end(text);
      });
      const whole = await failure(client().call(routes.createDocument, { body }));
      const streamed = await failure(
        client().call(routes.createDocument, { body }, { largeStrings: largeStrings('spool') }),
      );
      expect(streamed).toBeInstanceOf(ResponseError);
      expect(streamed.message).toBe(whole.message);
    }
  });

  it('an error status is read whole and mapped as usual', async () => {
    server.handle((_req, res) =>
      json(res, 422, { detail: [{ loc: ['body', 'content'], msg: 'too long', type: 'x' }] }),
    );
    const error = await failure(
      client().call(routes.createDocument, { body }, { largeStrings: largeStrings('spool') }),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(422);
  });

  it('the size cap counts what is held; the large string may pass it up to eight times', async () => {
    const content = 'y'.repeat(200_000);
    server.handle((_req, res) => trickle(res, documentAnswer(content), 16_384));
    const capped = client({ maxResponseBytes: 100_000 });
    const doc = await capped.call(routes.createDocument, { body }, { largeStrings: largeStrings('none') });
    expect(doc.token_count).toBe(42);
    // Without largeStrings the whole answer counts.
    expect((await failure(capped.call(routes.createDocument, { body }))).message).toMatch(/larger than/);
    // Held bytes past the cap: a huge field that is not streamed.
    server.handle((_req, res) => trickle(res, { ...documentAnswer('z'), label: content }, 16_384));
    const error = await failure(capped.call(routes.createDocument, { body }, { largeStrings: largeStrings('none') }));
    expect(error).toBeInstanceOf(ResponseError);
    expect(error.message).toMatch(/larger than/);
    // Past eight times the cap in all.
    server.handle((_req, res) => trickle(res, documentAnswer('w'.repeat(900_000)), 65_536));
    const tooBig = await failure(capped.call(routes.createDocument, { body }, { largeStrings: largeStrings('spool') }));
    expect(tooBig.message).toMatch(/larger than/);
  });

  it('no temporary directory for the files: the answer is read whole, the content kept in the value', async () => {
    server.handle((_req, res) => trickle(res, documentAnswer(CONTENT)));
    const set = new LargeStrings({ fields: ['content'], keep: 'spool', tmpDir: '/nonexistent/facectl-test' });
    sets.push(set);
    const doc = await client().call(routes.createDocument, { body }, { largeStrings: set });
    expect(doc.content === CONTENT).toBe(true);
    expect(set.has(doc.content)).toBe(false);
    expect(await printed(set, doc)).toBe(`${JSON.stringify(doc, null, 2)}\n`);
  });

  it('an answer cut off mid-content is retried; the first attempt leaves no file behind', async () => {
    const before = spoolFiles().length;
    server.handle(async (_req, res, index) => {
      if (index > 0) return trickle(res, documentAnswer(CONTENT));
      const bytes = Buffer.from(JSON.stringify(documentAnswer(CONTENT)), 'utf8');
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': bytes.length });
      res.write(bytes.subarray(0, 300_000));
      await new Promise((resolve) => setTimeout(resolve, 20));
      res.socket?.destroy();
    });
    const set = largeStrings('spool');
    const doc = await client().call(routes.createDocument, { body }, { largeStrings: set });
    expect(server.requests).toHaveLength(2);
    // Both attempts carried the same idempotency key.
    expect(server.requests[1]?.headers['idempotency-key']).toBe(server.requests[0]?.headers['idempotency-key']);
    expect(JSON.parse(await printed(set, doc))).toEqual({ ...documentAnswer(CONTENT), type: 'document' });
    expect(spoolFiles().length).toBe(before + 1);
    await set.dispose();
    expect(spoolFiles().length).toBe(before);
  });
});

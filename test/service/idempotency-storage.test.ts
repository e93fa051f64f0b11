import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, describe, expect, test } from 'vitest';
import { call, createFace, expectContract, startTestService, type TestService, tempDir } from '../helpers/service.js';

/**
 * A replayed document response is rebuilt from the stored document instead of a second copy of the
 * content: it must stay byte for byte the first response, after an edit of the document and after a
 * restart, and the content must be stored once. Also: token counts of awkward and large texts.
 */

// Quotes, backslashes, non-ASCII, a line break, the text of a special token, and the very sequence the
// service uses to find the content in a body.
const TRICKY = 'He said "hi" \\ back\u2028slash, naïve 日本語 🎉 <|endoftext|> "content":null {"content":null}\n';
const MARKER = 'zq-unique-marker-7731';

const { dir, cleanup } = tempDir();
const services: TestService[] = [];
afterAll(async () => {
  for (const svc of services) await svc.abort();
  cleanup();
});

async function start(file?: string): Promise<TestService> {
  const svc = await startTestService(file ? { dataFile: file } : {});
  services.push(svc);
  return svc;
}

const submit = (svc: TestService, key: string, content: string, idem: string) =>
  call(svc, 'createDocument', {
    key,
    body: { alias: 'idem-face', label: 'L "quoted"', content },
    headers: { 'Idempotency-Key': idem },
  });

describe('idempotent replays of documents', () => {
  test('a replay is byte-identical, before and after the document is edited, and the content is kept once', async () => {
    const svc = await start();
    const key = svc.key('pro');
    await createFace(svc, key, 'idem-face');
    const content = `${TRICKY}${MARKER}`;
    const first = await submit(svc, key, content, 'r-1');
    const doc = expectContract('createDocument', first, 201);
    expect(doc.content).toBe(content);

    const again = await submit(svc, key, content, 'r-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);

    const record = svc.store.statement("SELECT * FROM idempotency WHERE idempotency_key = 'r-1'", true).get();
    expect(JSON.stringify(record)).not.toContain('zq-unique');

    const edited = await call(svc, 'editDocument', {
      key,
      params: { document_id: doc.document_id },
      body: { content: 'replaced' },
    });
    expect(edited.status).toBe(200);
    const afterEdit = await submit(svc, key, content, 'r-1');
    expect(afterEdit.headers.get('idempotent-replayed')).toBe('true');
    expect(afterEdit.text).toBe(first.text);
    expect(svc.store.maps.documents.size).toBe(1);
  });

  test('content with a NUL character is read back whole, by GET and by a replay (a breaker: it was cut at the NUL)', async () => {
    const svc = await start();
    const key = svc.key('pro');
    await createFace(svc, key, 'idem-face');
    const content = 'x\u0000yz and \u0000 more';
    const first = await submit(svc, key, content, 'nul-1');
    const doc = expectContract('createDocument', first, 201);
    expect(doc.content).toBe(content);
    const got = await call(svc, 'getDocument', { key, params: { document_id: doc.document_id } });
    expect(expectContract('getDocument', got, 200).content).toBe(content);
    const again = await submit(svc, key, content, 'nul-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
  });

  test("a NUL character in a face's name and a document's label is read back whole too", async () => {
    const svc = await start();
    const key = svc.key('pro');
    const made = await call(svc, 'createFace', { key, body: { name: 'Ada\u0000Byron', alias: 'nul-face' } });
    expect(expectContract('createFace', made, 201).name).toBe('Ada\u0000Byron');
    const face = await call(svc, 'getFace', { key, params: { face_id: 'nul-face' } });
    expect(expectContract('getFace', face, 200).name).toBe('Ada\u0000Byron');
    const created = await call(svc, 'createDocument', {
      key,
      body: { alias: 'nul-face', label: 'a\u0000b', content: 'text', perspective: 'first-person' },
      headers: { 'idempotency-key': 'nul-label' },
    });
    const doc = expectContract('createDocument', created, 201);
    const got = await call(svc, 'getDocument', { key, params: { document_id: doc.document_id } });
    expect(expectContract('getDocument', got, 200).label).toBe('a\u0000b');
  });

  test('replays survive a restart, also after an edit; the database holds the content once', async () => {
    const file = join(dir, 'state.json');
    const svc = await start(file);
    const key = svc.key('pro');
    await createFace(svc, key, 'idem-face');
    const content = `${TRICKY}${MARKER}`;
    const first = await submit(svc, key, content, 'p-1');
    expect(first.status).toBe(201);
    await svc.close();
    expect(readFileSync(file).toString('latin1').split(MARKER).length - 1).toBe(1);

    const second = await start(file);
    const replay = await submit(second, key, content, 'p-1');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    await call(second, 'editDocument', {
      key,
      params: { document_id: first.body.document_id },
      body: { content: 'other words' },
    });
    await second.abort();

    const third = await start(file);
    const late = await submit(third, key, content, 'p-1');
    expect(late.headers.get('idempotent-replayed')).toBe('true');
    expect(late.text).toBe(first.text);
    expect(third.store.maps.documents.size).toBe(1);
  });
});

describe('token counts', () => {
  test('text that spells a special token is counted as text, not refused', async () => {
    const svc = await start();
    const key = svc.key('pro');
    await createFace(svc, key, 'idem-face');
    const res = await submit(svc, key, TRICKY, 't-1');
    const doc = expectContract('createDocument', res, 201);
    expect(doc.token_count).toBeGreaterThan(10);
  });

  test('a large document (counted off the event loop) has the same count as counting it whole', async () => {
    const svc = await start();
    const key = svc.key('pro');
    await createFace(svc, key, 'idem-face');
    const content = 'Grüße aus Zürich, "quoted" words and 12345 numbers.\n'.repeat(8000);
    expect(content.length).toBeGreaterThan(256 * 1024);
    const [big, small] = await Promise.all([submit(svc, key, content, 'big'), submit(svc, key, 'small one', 'small')]);
    expect(expectContract('createDocument', big, 201).token_count).toBe(countTokens(content));
    expect(expectContract('createDocument', small, 201).token_count).toBe(countTokens('small one'));
    expect(big.body.content).toBe(content);
  });
});

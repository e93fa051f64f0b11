import { beforeAll, describe, expect, test } from 'vitest';
import type { ImportFetcher } from '../../src/service/index.js';
import {
  call,
  createDocument,
  createFace,
  expectContract,
  expectError,
  manualClock,
  startTestService,
} from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';

const clock = manualClock('2026-03-15T12:00:00.000Z');
const fetched: string[] = [];
const fetcher: ImportFetcher = async (url) => {
  fetched.push(url);
  if (url.includes('refused'))
    throw Object.assign(new Error('refused: 127.0.0.1 is not a public address'), { code: 'url_not_allowed' });
  if (url.includes('broken')) throw Object.assign(new Error('the server answered 500'), { code: 'fetch_failed' });
  return {
    text: url.includes('empty') ? '' : 'Ada Lovelace (1815-1852) wrote notes on the Analytical Engine.',
    finalUrl: url,
    contentType: 'text/plain',
  };
};
const svc = useService({ clock, fetchUrl: fetcher });
let key: string;
beforeAll(() => {
  key = svc.key('pro');
});

describe('faces', () => {
  test('created is Unix seconds, owned_by the user, object face, counts zero, uid or alias both find it', async () => {
    // Other tests in this file move the shared clock; the face is stamped with its time now.
    const createdAt = Math.floor(clock.now().getTime() / 1000);
    const face = await createFace(svc, key, 'ada-lovelace', { basic_facts: { born: 1815 }, default_tools: ['search'] });
    expect(face).toMatchObject({
      alias: 'ada-lovelace',
      created: createdAt,
      owned_by: svc.userId('pro'),
      object: 'face',
      name: 'Face ada-lovelace',
      basic_facts: { born: 1815 },
      default_tools: ['search'],
      default_model: null,
      component_counts: { alpha: 0, beta: 0, delta: 0, epsilon: 0 },
    });
    expect(face.uid).toMatch(/^face_[A-Za-z0-9]+$/);
    const byUid = expectContract('getFace', await call(svc, 'getFace', { key, params: { face_id: face.uid } }), 200);
    const byAlias = expectContract(
      'getFace',
      await call(svc, 'getFace', { key, params: { face_id: 'ada-lovelace' } }),
      200,
    );
    expect(byUid).toEqual(face);
    expect(byAlias).toEqual(face);
  });

  test('a duplicate alias is 409 alias_taken; another user may use the alias', async () => {
    await createFace(svc, key, 'dup-alias');
    expectError(
      'createFace',
      await call(svc, 'createFace', { key, body: { name: 'Again', alias: 'dup-alias' } }),
      409,
      'alias_taken',
    );
    await createFace(svc, svc.key('free'), 'dup-alias');
  });

  test('another user cannot read a face (404)', async () => {
    const face = await createFace(svc, key, 'private-face');
    expectError(
      'getFace',
      await call(svc, 'getFace', { key: svc.key('standard'), params: { face_id: face.uid } }),
      404,
      'face_not_found',
    );
  });

  test.each([
    ['upper case', 'Ada'],
    ['spaces', 'ada lovelace'],
    ['unicode', 'adä'],
    ['too short', 'ad'],
    ['too long', 'a'.repeat(65)],
    ['double hyphen', 'ada--l'],
  ])('an alias with %s is a 422 listing the field', async (_, alias) => {
    const body = expectError(
      'createFace',
      await call(svc, 'createFace', { key, body: { name: 'X', alias } }),
      422,
      'validation_error',
    );
    expect(body.detail).toEqual([expect.objectContaining({ loc: ['body', 'alias'], type: expect.any(String) })]);
  });
});

describe('documents', () => {
  test('submit: a real BPE token count, version 1, source submit, perspective third-person by default, not synced', async () => {
    await createFace(svc, key, 'doc-face');
    const doc = await createDocument(svc, key, 'doc-face', 'Hello, world! Ada wrote notes.');
    expect(doc).toMatchObject({
      alias: 'doc-face',
      label: 'notes',
      source: 'submit',
      version: 1,
      token_count: 8,
      synced: false,
      perspective: 'third-person',
      type: 'document',
      prepare_status: null,
    });
    expect(doc.document_id).toMatch(/^doc_/);
    const first = await call(svc, 'createDocument', {
      key,
      body: { alias: 'doc-face', content: 'I was born in London.', label: 'me', perspective: 'first-person' },
    });
    expect(expectContract('createDocument', first, 201).perspective).toBe('first-person');
  });

  test('a document for a face the user does not have is 404 face_not_found', async () => {
    const res = await call(svc, 'createDocument', { key, body: { alias: 'no-such-face', content: 'x', label: 'y' } });
    expectError('createDocument', res, 404, 'face_not_found');
  });

  test('edit: version + 1, synced false, token count recounted; label-only edits also make a version', async () => {
    await createFace(svc, key, 'edit-face');
    const doc = await createDocument(svc, key, 'edit-face', 'One two three.');
    await call(svc, 'syncDocument', { key, params: { document_id: doc.document_id } });
    clock.advance(1000);
    const edited = expectContract(
      'editDocument',
      await call(svc, 'editDocument', {
        key,
        params: { document_id: doc.document_id },
        body: { content: 'One two three four five.' },
      }),
      200,
    );
    expect(edited).toMatchObject({ version: 2, synced: false, token_count: 6, created_at: doc.created_at });
    expect(edited.updated_at).not.toBe(doc.updated_at);
    const relabeled = await call(svc, 'editDocument', {
      key,
      params: { document_id: doc.document_id },
      body: { label: 'new' },
    });
    expect(expectContract('editDocument', relabeled, 200)).toMatchObject({ version: 3, label: 'new' });
    const empty = await call(svc, 'editDocument', { key, params: { document_id: doc.document_id }, body: {} });
    expectError('editDocument', empty, 422, 'validation_error');
  });

  test("another user's document is 404", async () => {
    await createFace(svc, key, 'mine-face');
    const doc = await createDocument(svc, key, 'mine-face', 'mine');
    const other = svc.key('standard');
    expectError(
      'getDocument',
      await call(svc, 'getDocument', { key: other, params: { document_id: doc.document_id } }),
      404,
      'document_not_found',
    );
    expectError(
      'syncDocument',
      await call(svc, 'syncDocument', { key: other, params: { document_id: doc.document_id } }),
      404,
      'document_not_found',
    );
  });
});

describe('import', () => {
  test('fetches through the fetcher; label and source are the URL; type and perspective as asked', async () => {
    await createFace(svc, key, 'import-face');
    const res = await call(svc, 'importIntoFace', {
      key,
      params: { face_id: 'import-face' },
      body: {
        url: 'https://example.org/ada.txt',
        type: 'transcript',
        perspective: 'first-person',
        face_speaker: 'Ada',
      },
    });
    const doc = expectContract('importIntoFace', res, 201);
    expect(doc).toMatchObject({
      alias: 'import-face',
      label: 'https://example.org/ada.txt',
      source: 'https://example.org/ada.txt',
      type: 'transcript',
      perspective: 'first-person',
      face_speaker: 'Ada',
      version: 1,
      synced: false,
    });
    expect(doc.token_count).toBeGreaterThan(5);
    expect(fetched).toContain('https://example.org/ada.txt');
  });

  test('url_not_allowed and fetch_failed from the fetcher, and an empty page, are 422 with their code; nothing is stored', async () => {
    await createFace(svc, key, 'import-fail');
    const before = svc.store.maps.documents.size;
    const refused = await call(svc, 'importIntoFace', {
      key,
      params: { face_id: 'import-fail' },
      body: { url: 'http://refused.test/' },
    });
    expect(expectError('importIntoFace', refused, 422, 'url_not_allowed').detail).toContain('not a public address');
    const broken = await call(svc, 'importIntoFace', {
      key,
      params: { face_id: 'import-fail' },
      body: { url: 'http://broken.test/' },
    });
    expect(expectError('importIntoFace', broken, 422, 'fetch_failed').detail).toContain('500');
    // An empty page, as submitted content, is no document.
    const empty = await call(svc, 'importIntoFace', {
      key,
      params: { face_id: 'import-fail' },
      body: { url: 'http://empty.test/' },
    });
    expect(expectError('importIntoFace', empty, 422, 'fetch_failed').detail).toBe(
      'http://empty.test/ gave an empty document',
    );
    expect(svc.store.maps.documents.size).toBe(before);
  });

  test('an import type outside document/transcript is a 422 and nothing is fetched', async () => {
    const count = fetched.length;
    const res = await call(svc, 'importIntoFace', {
      key,
      params: { face_id: 'import-face' },
      body: { url: 'https://x.test/', type: 'video' },
    });
    expectError('importIntoFace', res, 422, 'validation_error');
    expect(fetched.length).toBe(count);
  });
});

describe('threads', () => {
  /** Creates a face and a thread of it (201, checked against the contract); the thread. */
  const faceWithThread = async (alias: string, label: string) => {
    await createFace(svc, key, alias);
    return expectContract('createThread', await call(svc, 'createThread', { key, body: { alias, label } }), 201);
  };

  test('create, replace messages (from -> name, counts, archive, recount, synced false)', async () => {
    const created = await faceWithThread('thread-face', 'Interview 1');
    expect(created).toMatchObject({
      label: 'Interview 1',
      alias: 'thread-face',
      messages: [],
      message_count: 0,
      messages_archived: 0,
      synced: false,
      token_count: 0,
    });
    expect(created.thread_id).toMatch(/^thr_/);
    const tid = { thread_id: created.thread_id };
    const first = [
      { role: 'assistant', content: 'Where were you born?', from: 'Interviewer' },
      { role: 'user', content: 'In London.', from: 'Ada' },
    ];
    const one = expectContract(
      'replaceThreadMessages',
      await call(svc, 'replaceThreadMessages', { key, params: tid, body: { messages: first } }),
      200,
    );
    expect(one).toMatchObject({ message_count: 2, messages_archived: 0, token_count: 8, synced: false });
    expect(one.messages).toEqual([
      { role: 'assistant', content: 'Where were you born?', name: 'Interviewer' },
      { role: 'user', content: 'In London.', name: 'Ada' },
    ]);
    await call(svc, 'syncThread', { key, params: tid });
    const second = [{ role: 'user', content: 'Hello', from: 'Ada' }];
    const two = expectContract(
      'replaceThreadMessages',
      await call(svc, 'replaceThreadMessages', { key, params: tid, body: { messages: second } }),
      200,
    );
    expect(two).toMatchObject({ message_count: 1, messages_archived: 2, token_count: 1, synced: false });
    const three = expectContract(
      'replaceThreadMessages',
      await call(svc, 'replaceThreadMessages', { key, params: tid, body: { messages: [] } }),
      200,
    );
    expect(three).toMatchObject({ message_count: 0, messages_archived: 3, token_count: 0 });
    expect(expectContract('getThread', await call(svc, 'getThread', { key, params: tid }), 200)).toMatchObject({
      messages_archived: 3,
    });
  });

  test('prepare_status is a string and the chunk counts integers from the first answer on: pending, queued, processing, ready', async () => {
    const created = await faceWithThread('thread-prep', 'prep');
    expect(created).toMatchObject({ prepare_status: 'pending', chunks_total: 0, chunks_completed: 0 });
    const tid = { thread_id: created.thread_id };
    const messages = [{ role: 'user', content: 'word '.repeat(1500), from: 'Ada' }];
    const replaced = await call(svc, 'replaceThreadMessages', { key, params: tid, body: { messages } });
    expect(replaced.body).toMatchObject({ prepare_status: 'pending', chunks_total: 0, chunks_completed: 0 });
    const synced = (await call(svc, 'syncThread', { key, params: tid })).body;
    expect(synced).toMatchObject({ prepare_status: 'queued', chunks_total: 2, chunks_completed: 0 });
    clock.advance(300);
    expect((await call(svc, 'getThread', { key, params: tid })).body).toMatchObject({
      prepare_status: 'processing',
      chunks_total: 2,
      chunks_completed: 1,
    });
    clock.advance(1000);
    expect((await call(svc, 'getThread', { key, params: tid })).body).toMatchObject({
      prepare_status: 'ready',
      chunks_total: 2,
      chunks_completed: 2,
    });
  });

  test('a message without from is a 422 naming its index', async () => {
    await createFace(svc, key, 'thread-bad');
    const { body } = await call(svc, 'createThread', { key, body: { alias: 'thread-bad', label: 'x' } });
    const res = await call(svc, 'replaceThreadMessages', {
      key,
      params: { thread_id: body.thread_id },
      body: {
        messages: [
          { role: 'user', content: 'x', from: 'a' },
          { role: 'user', content: 'y' },
        ],
      },
    });
    expect(expectError('replaceThreadMessages', res, 422, 'validation_error').detail[0].loc).toEqual([
      'body',
      'messages',
      1,
      'from',
    ]);
  });
});

describe('import with the default fetcher (src/service/url-fetch), over loopback only', () => {
  test('loopback is refused (422 url_not_allowed) unless allowPrivateUrls; then the text is imported', async () => {
    const { createServer } = await import('node:http');
    let hits = 0;
    const origin = createServer((_req, res) => {
      hits++;
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Served on loopback.');
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(origin.address() as { port: number }).port}/doc.txt`;
    const strict = await startTestService();
    const relaxed = await startTestService({ allowPrivateUrls: true });
    try {
      await createFace(strict, strict.key('pro'), 'loop-face');
      const refused = await call(strict, 'importIntoFace', {
        key: strict.key('pro'),
        params: { face_id: 'loop-face' },
        body: { url },
      });
      expectError('importIntoFace', refused, 422, 'url_not_allowed');
      expect(hits).toBe(0);

      await createFace(relaxed, relaxed.key('pro'), 'loop-face');
      const ok = await call(relaxed, 'importIntoFace', {
        key: relaxed.key('pro'),
        params: { face_id: 'loop-face' },
        body: { url },
      });
      expect(expectContract('importIntoFace', ok, 201)).toMatchObject({ content: 'Served on loopback.', source: url });
      expect(hits).toBe(1);
    } finally {
      await strict.close();
      await relaxed.close();
      await new Promise((resolve) => origin.close(resolve));
    }
  });

  test('a page is decoded with the charset its Content-Type names; an unknown one is read as UTF-8', async () => {
    const { createServer } = await import('node:http');
    const pages: Record<string, [string, Buffer]> = {
      '/latin1.txt': ['text/plain; charset=iso-8859-1', Buffer.from('caf\xe9', 'latin1')],
      '/quoted.txt': ['text/plain;Charset="KOI8-R"', Buffer.from([0xcd, 0xc9, 0xd2])],
      '/unknown.txt': ['text/plain; charset=x-no-such-charset', Buffer.from('café', 'utf8')],
      '/none.txt': ['text/plain', Buffer.from('café', 'utf8')],
    };
    const origin = createServer((req, res) => {
      const [type, bytes] = pages[req.url ?? ''] ?? ['text/plain', Buffer.from('?')];
      res.writeHead(200, { 'Content-Type': type });
      res.end(bytes);
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(origin.address() as { port: number }).port}`;
    const relaxed = await startTestService({ allowPrivateUrls: true });
    try {
      const pro = relaxed.key('pro');
      await createFace(relaxed, pro, 'charset-face');
      const imported = async (path: string) => {
        const res = await call(relaxed, 'importIntoFace', {
          key: pro,
          params: { face_id: 'charset-face' },
          body: { url: base + path },
        });
        return expectContract('importIntoFace', res, 201).content;
      };
      expect(await imported('/latin1.txt')).toBe('café');
      expect(await imported('/quoted.txt')).toBe('мир');
      expect(await imported('/unknown.txt')).toBe('café');
      expect(await imported('/none.txt')).toBe('café');
    } finally {
      await relaxed.close();
      await new Promise((resolve) => origin.close(resolve));
    }
  });

  test("a URL over the label rule's 500 characters labels its document cut to 500, never inside a surrogate pair", async () => {
    const { createServer } = await import('node:http');
    const origin = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('a page'));
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(origin.address() as { port: number }).port}/a.txt?q=`;
    const relaxed = await startTestService({ allowPrivateUrls: true });
    try {
      const pro = relaxed.key('pro');
      await createFace(relaxed, pro, 'ada-lovelace');
      const imported = async (url: string) => {
        const res = await call(relaxed, 'importIntoFace', {
          key: pro,
          params: { face_id: 'ada-lovelace' },
          body: { url },
        });
        return expectContract('importIntoFace', res, 201);
      };
      const long = base + 'a'.repeat(700);
      expect(await imported(long)).toMatchObject({ label: long.slice(0, 500), source: long });
      // The 500th UTF-16 unit is the first half of an emoji: the label stops before the emoji.
      const astral = `${base}${'a'.repeat(499 - base.length)}😀${'b'.repeat(10)}`;
      const doc = await imported(astral);
      expect(doc).toMatchObject({ label: astral.slice(0, 499), source: astral });
      // The label the service gave is one it accepts back.
      const edited = await call(relaxed, 'editDocument', {
        key: pro,
        params: { document_id: doc.document_id },
        body: { label: doc.label },
      });
      expectContract('editDocument', edited, 200);
    } finally {
      await relaxed.close();
      await new Promise((resolve) => origin.close(resolve));
    }
  });
});

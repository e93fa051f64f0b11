import { appendFileSync, chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  call,
  createDocument,
  createFace,
  decideConsent,
  expectContract,
  expectError,
  startTestService,
  type TestService,
  tempDir,
  textOfTokens,
} from '../helpers/service.js';

/** `--data FILE`: snapshot + journal, atomic, mode 0600, survives restart and crash. */

let tmp: ReturnType<typeof tempDir>;
let file: string;
const running: TestService[] = [];
const start = async () => {
  const svc = await startTestService({ dataFile: file });
  running.push(svc);
  return svc;
};

beforeEach(() => {
  tmp = tempDir();
  file = join(tmp.dir, 'state.json');
});
afterEach(async () => {
  for (const svc of running.splice(0)) await svc.close();
  tmp.cleanup();
});

const mode = (path: string) => statSync(path).mode & 0o777;

/** Creates one of everything with the first service; returns what to look for after a restart. */
async function populate(svc: TestService) {
  const key = svc.key('connect');
  const face = await createFace(svc, key, 'kept-face');
  const doc = await createDocument(svc, key, 'kept-face', 'This text survives a restart.');
  await call(svc, 'syncDocument', { key, params: { document_id: doc.document_id } });
  const thread = (await call(svc, 'createThread', { key, body: { alias: 'kept-face', label: 'kept' } })).body;
  const messages = [{ role: 'user', content: 'Kept words.', from: 'Ada' }];
  await call(svc, 'replaceThreadMessages', { key, params: { thread_id: thread.thread_id }, body: { messages } });
  const child = expectContract('createApiKey', await call(svc, 'createApiKey', { key, body: { budget_usd: 1 } }), 201);
  await decideConsent(svc, key, 'approve');
  const idem = await call(svc, 'createDocument', {
    key,
    body: { alias: 'kept-face', content: 'idempotent', label: 'i' },
    headers: { 'Idempotency-Key': 'persisted' },
  });
  return { key, face, doc, thread, child, idem };
}

async function expectPopulated(svc: TestService, was: Awaited<ReturnType<typeof populate>>) {
  // The old bootstrap key and the child key still work; new bootstrap keys were minted.
  expect(svc.key('connect')).not.toBe(was.key);
  for (const key of [was.key, was.child.key, svc.key('connect')]) {
    expectContract('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key }), 200);
  }
  const key = svc.key('connect');
  expect(expectContract('getFace', await call(svc, 'getFace', { key, params: { face_id: 'kept-face' } }), 200)).toEqual(
    was.face,
  );
  const doc = expectContract(
    'getDocument',
    await call(svc, 'getDocument', { key, params: { document_id: was.doc.document_id } }),
    200,
  );
  expect(doc).toMatchObject({ content: 'This text survives a restart.', synced: true, billing_source: 'credits' });
  const thread = expectContract(
    'getThread',
    await call(svc, 'getThread', { key, params: { thread_id: was.thread.thread_id } }),
    200,
  );
  expect(thread).toMatchObject({ message_count: 1, messages: [{ role: 'user', content: 'Kept words.', name: 'Ada' }] });
  const conns = expectContract('listOAuthConnections', await call(svc, 'listOAuthConnections', { key }), 200);
  expect(conns[0]).toMatchObject({ connected: true });
  expect(svc.store.get('users', svc.userId('connect'))?.credits_micro).toBe(5_000_000 - doc.token_count * 2);
  // The idempotency record survives too: the retry is replayed, not created again.
  const retry = await call(svc, 'createDocument', {
    key: was.key,
    body: { alias: 'kept-face', content: 'idempotent', label: 'i' },
    headers: { 'Idempotency-Key': 'persisted' },
  });
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  expect(retry.text).toBe(was.idem.text);
}

test('state survives a clean restart; files are mode 0600 and hold no secret', async () => {
  const first = await start();
  const was = await populate(first);
  await first.close();
  for (const path of [file, `${file}.journal`]) expect(mode(path)).toBe(0o600);
  const onDisk = readFileSync(file, 'utf8');
  expect(onDisk).toContain('kept-face');
  expect(onDisk).not.toContain(was.child.key.slice(13));
  expect(readFileSync(`${file}.journal`, 'utf8')).toBe('');
  await expectPopulated(await start(), was);
});

test('state survives a crash: the journal written before each answer is replayed', async () => {
  const first = await start();
  const was = await populate(first);
  await first.abort();
  expect(readFileSync(`${file}.journal`, 'utf8').split('\n').length).toBeGreaterThan(5);
  await expectPopulated(await start(), was);
});

test('saving costs the change, not the state: a request appends one journal line and leaves the snapshot alone', async () => {
  const svc = await start();
  await createFace(svc, svc.key('pro'), 'cheap-face');
  const snapshot = statSync(file);
  const journal = readFileSync(`${file}.journal`, 'utf8');
  await createDocument(svc, svc.key('pro'), 'cheap-face', 'one more');
  const after = statSync(file);
  expect([after.ino, after.size, after.mtimeMs]).toEqual([snapshot.ino, snapshot.size, snapshot.mtimeMs]);
  const added = readFileSync(`${file}.journal`, 'utf8').slice(journal.length);
  expect(added.split('\n')).toHaveLength(2);
  expect(added).toContain('one more');
});

test('a large journal is compacted into the snapshot', async () => {
  const svc = await start();
  const key = svc.key('pro');
  await createFace(svc, key, 'big-face');
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await createDocument(svc, key, 'big-face', textOfTokens(400_000))).document_id);
  expect(statSync(`${file}.journal`).size).toBeLessThan(4 * 1024 * 1024);
  await svc.abort();
  const again = await start();
  for (const id of ids)
    expectContract('getDocument', await call(again, 'getDocument', { key, params: { document_id: id } }), 200);
});

describe('damaged files', () => {
  test('a torn final journal line (a write cut by a crash) is ignored', async () => {
    const first = await start();
    const face = await createFace(first, first.key('pro'), 'torn-face');
    await first.abort();
    appendFileSync(`${file}.journal`, '{"ops":[["put","faces",{"id":"face_half');
    const svc = await start();
    expect(
      expectContract('getFace', await call(svc, 'getFace', { key: svc.key('pro'), params: { face_id: face.uid } }), 200)
        .alias,
    ).toBe('torn-face');
    await createFace(svc, svc.key('pro'), 'after-torn');
    await svc.abort();
    const third = await start();
    expectContract(
      'getFace',
      await call(third, 'getFace', { key: third.key('pro'), params: { face_id: 'after-torn' } }),
      200,
    );
  });

  test('a snapshot a killed process was writing is removed at the next start; the state is the renamed one', async () => {
    const first = await start();
    const face = await createFace(first, first.key('pro'), 'kept-through-tmp');
    await first.abort();
    // What kill -9 in the middle of a snapshot leaves: a temporary file that was never renamed into place.
    const leftover = `${file}.tmp-99999-abcdef`;
    writeFileSync(leftover, '{"format":"facectl-serve-state","collections":{"faces":{');
    writeFileSync(join(tmp.dir, 'unrelated.tmp-1-x'), 'not ours');
    const svc = await start();
    expect(existsSync(leftover)).toBe(false);
    expect(existsSync(join(tmp.dir, 'unrelated.tmp-1-x'))).toBe(true);
    const got = await call(svc, 'getFace', { key: svc.key('pro'), params: { face_id: face.uid } });
    expect(expectContract('getFace', got, 200).alias).toBe('kept-through-tmp');
  });

  test('a corrupt snapshot or journal line stops the start, naming the file; nothing is overwritten', async () => {
    writeFileSync(file, '{"format": "facectl-serve-state", "collections": {', { mode: 0o600 });
    await expect(startTestService({ dataFile: file })).rejects.toThrow(file);
    expect(readFileSync(file, 'utf8')).toBe('{"format": "facectl-serve-state", "collections": {');

    writeFileSync(file, JSON.stringify({ format: 'facectl-serve-state', version: 1, collections: {} }));
    writeFileSync(`${file}.journal`, 'garbage\n{"ops":[]}\n');
    await expect(startTestService({ dataFile: file })).rejects.toThrow(/journal line 1/);
    expect(readFileSync(`${file}.journal`, 'utf8')).toBe('garbage\n{"ops":[]}\n');
  });

  test('files another tool left at 0644 are made 0600', async () => {
    const first = await start();
    await first.close();
    chmodSync(file, 0o644);
    chmodSync(`${file}.journal`, 0o644);
    const svc = await start();
    await createFace(svc, svc.key('free'), 'mode-face');
    expect(mode(file)).toBe(0o600);
    expect(mode(`${file}.journal`)).toBe(0o600);
  });
});

test('a key-creation retry after a restart is refused (409), never a second key: its secret was never saved', async () => {
  const first = await start();
  const key = first.key('pro');
  const body = { name: 'once' };
  const headers = { 'Idempotency-Key': 'key-once' };
  const created = expectContract('createApiKey', await call(first, 'createApiKey', { key, body, headers }), 201);
  await first.close();
  expect(readFileSync(file, 'utf8')).not.toContain(created.key.slice(13));
  const svc = await start();
  const keys = svc.store.maps.keys.size;
  expectError(
    'createApiKey',
    await call(svc, 'createApiKey', { key, body, headers }),
    409,
    'idempotency_replay_unavailable',
  );
  expect(svc.store.maps.keys.size).toBe(keys);
});

test('close() lets a request in flight finish, answers it, and saves it', async () => {
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started = () => {};
  const fetching = new Promise<void>((resolve) => {
    started = resolve;
  });
  const svc = await startTestService({
    dataFile: file,
    fetchUrl: async (url) => {
      started();
      await gate;
      return { text: 'fetched while closing', finalUrl: url, contentType: 'text/plain' };
    },
  });
  const key = svc.key('pro');
  await createFace(svc, key, 'closing-face');
  const pending = call(svc, 'importIntoFace', {
    key,
    params: { face_id: 'closing-face' },
    body: { url: 'https://slow.test/' },
  });
  await fetching;
  const closed = svc.close();
  release();
  const res = await pending;
  const doc = expectContract('importIntoFace', res, 201);
  await closed;
  const again = await start();
  const stored = await call(again, 'getDocument', { key, params: { document_id: doc.document_id } });
  expect(expectContract('getDocument', stored, 200).content).toBe('fetched while closing');
});

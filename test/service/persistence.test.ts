import { chmodSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
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
} from '../helpers/service.js';

/** `--data FILE`: an SQLite database, mode 0600, that survives restarts and aborts. */

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

test('state survives a clean restart; the file is mode 0600, stands alone once closed, and holds no secret', async () => {
  const first = await start();
  const was = await populate(first);
  await first.close();
  expect(mode(file)).toBe(0o600);
  // Closed: the WAL is folded into the file, which any SQLite reads as it is.
  expect(readdirSync(tmp.dir)).toEqual(['state.json']);
  const onDisk = readFileSync(file);
  expect(onDisk.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\u0000');
  expect(onDisk.includes('kept-face')).toBe(true);
  expect(onDisk.includes(was.child.key.slice(13))).toBe(false);
  await expectPopulated(await start(), was);
});

test('the --data file replaced while serve runs: its state is saved beside it at stop, the new file left as it is', async () => {
  const first = await start();
  const was = await populate(first);
  // A breaker's `mv garbage state.json` under a running serve: what serve holds is reached by no name.
  writeFileSync(join(tmp.dir, 'garbage'), 'not a database');
  renameSync(join(tmp.dir, 'garbage'), file);
  await first.close();
  expect(readFileSync(file, 'utf8')).toBe('not a database');
  const rescued = first.store.rescued as string;
  expect(rescued).toMatch(/\/state\.json\.rescued-\d{4}-\d\d-\d\dT[\d-]+Z$/);
  expect(mode(rescued)).toBe(0o600);
  file = rescued;
  await expectPopulated(await start(), was);
});

test("the --data file's directory removed while serve runs: its state is saved in the temporary directory", async () => {
  const first = await start();
  const was = await populate(first);
  rmSync(tmp.dir, { recursive: true, force: true });
  await first.close();
  const rescued = first.store.rescued as string;
  expect(dirname(rescued)).toBe(tmpdir());
  expect(basename(rescued)).toMatch(/^state\.json\.rescued-/);
  expect(mode(rescued)).toBe(0o600);
  try {
    file = rescued;
    await expectPopulated(await start(), was);
  } finally {
    for (const svc of running.splice(0)) await svc.close();
    rmSync(rescued, { force: true });
  }
});

test('state survives an abort (nothing more saved): every answered change was committed already', async () => {
  const first = await start();
  const was = await populate(first);
  await first.abort();
  await expectPopulated(await start(), was);
});

test('with --data, the bootstrap keys of an earlier start keep working after a restart', async () => {
  const first = await start();
  const earlier = (['free', 'standard', 'pro', 'connect'] as const).map((plan) => first.key(plan));
  await first.close();
  const svc = await start();
  for (const key of earlier) expectContract('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key }), 200);
});

test('a file another tool left at 0644 is made 0600', async () => {
  const first = await start();
  await first.close();
  chmodSync(file, 0o644);
  const svc = await start();
  await createFace(svc, svc.key('free'), 'mode-face');
  expect(mode(file)).toBe(0o600);
  expect(mode(`${file}-wal`)).toBe(0o600);
});

test('a key-creation retry after a restart is refused (409), never a second key: its secret was never saved', async () => {
  const first = await start();
  const key = first.key('pro');
  const body = { name: 'once' };
  const headers = { 'Idempotency-Key': 'key-once' };
  const created = expectContract('createApiKey', await call(first, 'createApiKey', { key, body, headers }), 201);
  await first.close();
  expect(readFileSync(file).includes(created.key.slice(13))).toBe(false);
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

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { APPLICATION_ID, MIGRATIONS } from '../../src/service/schema.js';
import { runCli } from '../helpers/run-cli.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import {
  call,
  expectContract,
  expectError,
  request,
  startTestService,
  type TestService,
  tempDir,
} from '../helpers/service.js';

/**
 * serve's SQLite database: its tables as a user's `sqlite3` shell sees them, the one-time import of the
 * JSON state files of earlier versions (snapshot + journal, a torn last line included), files it must
 * refuse untouched (case 58), and what a 401 says about keys of earlier starts (issue 22, item 8).
 */

let tmp: ReturnType<typeof tempDir>;
const running: TestService[] = [];
const start = async (dataFile?: string) => {
  const svc = await startTestService(dataFile ? { dataFile } : {});
  running.push(svc);
  return svc;
};
afterEach(async () => {
  for (const svc of running.splice(0)) await svc.close();
  tmp?.cleanup();
});

/** Reads a database file with another SQLite connection, as the `sqlite3` shell would. */
function query(file: string, sql: string): unknown[][] {
  const db = new Database(file);
  try {
    return db.prepare(sql).raw().all() as unknown[][];
  } finally {
    db.close();
  }
}

test('the database holds one table per kind of record, under a version any SQLite reads', async () => {
  tmp = tempDir();
  const file = join(tmp.dir, 'state.db');
  const svc = await start(file);
  await call(svc, 'createFace', { key: svc.key('pro'), body: { name: 'Ada', alias: 'ada' } });
  await svc.close();
  const tables = query(file, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").flat();
  expect(tables).toEqual(['connections', 'documents', 'faces', 'idempotency', 'keys', 'threads', 'users']);
  expect(query(file, 'PRAGMA user_version')).toEqual([[MIGRATIONS.length]]);
  expect(query(file, 'PRAGMA application_id')).toEqual([[APPLICATION_ID]]);
  expect(query(file, 'SELECT plan FROM users ORDER BY plan').flat()).toEqual(['connect', 'free', 'pro', 'standard']);
  expect(query(file, 'SELECT alias, name FROM faces')).toEqual([['ada', 'Ada']]);
  // Keys as hashes only (case 34): the secret's digest, never the secret.
  const hashes = query(file, 'SELECT hash FROM keys').flat() as string[];
  expect(hashes).toContain(createHash('sha256').update(svc.key('pro')).digest('hex'));
});

test('a version 1 database (its idempotency table WITHOUT ROWID) is migrated once, its records kept: a replay answers as before', async () => {
  tmp = tempDir();
  const file = join(tmp.dir, 'state.db');
  const first = await start(file);
  await call(first, 'createFace', { key: first.key('pro'), body: { name: 'Ada', alias: 'ada' } });
  const sent = { key: first.key('pro'), body: { alias: 'ada', label: 'kept', content: 'once' } };
  const headers = { 'Idempotency-Key': 'k-migrated' };
  const made = expectContract('createDocument', await call(first, 'createDocument', { ...sent, headers }), 201);
  await first.close();
  running.splice(running.indexOf(first), 1);
  // Back to version 1, as a facectl of before this migration left it: the table as MIGRATIONS[0] made it.
  const v1Table = /CREATE TABLE idempotency \([^;]*;/.exec(MIGRATIONS[0] as string)?.[0] as string;
  expect(v1Table).toContain('WITHOUT ROWID');
  const db = new Database(file);
  db.exec(`CREATE TABLE v1 AS SELECT * FROM idempotency; DROP TABLE idempotency; ${v1Table}
    INSERT INTO idempotency SELECT * FROM v1; DROP TABLE v1;
    CREATE INDEX idempotency_document ON idempotency (document_id) WHERE document_id IS NOT NULL;
    PRAGMA user_version = 1;`);
  db.close();
  const tableSql = () => query(file, "SELECT sql FROM sqlite_schema WHERE name = 'idempotency'").flat()[0];
  expect(tableSql()).toContain('WITHOUT ROWID');

  const second = await start(file);
  // The same key and body (the key is the same user's): the document made before, not another.
  const replay = { ...sent, key: second.key('pro') };
  const again = expectContract('createDocument', await call(second, 'createDocument', { ...replay, headers }), 201);
  expect(again.document_id).toBe(made.document_id);
  await second.close();
  running.splice(running.indexOf(second), 1);
  expect(query(file, 'PRAGMA user_version')).toEqual([[MIGRATIONS.length]]);
  expect(tableSql()).not.toContain('WITHOUT ROWID');
  expect(query(file, "SELECT count(*) FROM documents WHERE label = 'kept'")).toEqual([[1]]);
  expect(query(file, 'SELECT idempotency_key FROM idempotency').flat()).toEqual(['k-migrated']);
});

describe('a state file of an earlier facectl (JSON snapshot + journal) is imported once, losslessly', () => {
  const SECRET = 'fcs_AAAAAAAA_0123456789abcdefghijABCDEFGHIJKL';
  const CONTENT = 'Kept "content" ✓ with a\nnew line';
  const now = Date.now();
  const iso = new Date(now).toISOString();
  const docBody = JSON.stringify({ alias: 'old-face', label: 'old', content: CONTENT });
  const prefix = '{"document_id":"doc_old","version":1,"content":';
  const suffix = ',"label":"old"}';

  /** The files a facectl serve of the JSON format left: a snapshot, and journal lines (the last torn). */
  function writeOldState(file: string) {
    const user = {
      id: 'usr_old',
      plan: 'connect',
      account: 'connect@facectl.local',
      credits_micro: 4_000_000,
      quota_month: iso.slice(0, 7),
      quota_used: 0,
      created_at: iso,
    };
    const key = {
      id: 'key_AAAAAAAA',
      user_id: 'usr_old',
      parent_id: null,
      bootstrap: false,
      name: 'kept key',
      hash: createHash('sha256').update(SECRET).digest('hex'),
      key_prefix: 'fcs_AAAAAAAA',
      created_at: iso,
      expires_at: null,
      scopes: ['v1:*'],
      budget_usd: 2.5,
      spent_micro: 1234,
      allowed_face_ids: null,
      allowed_llm_models: ['model-a'],
    };
    const face = {
      id: 'face_old',
      user_id: 'usr_old',
      alias: 'old-face',
      name: 'Old Face',
      basic_facts: JSON.parse('{"born":1815,"__proto__":"kept as data"}') as object,
      default_tools: null,
      default_model: 'model-a',
      formula: null,
      created: Math.floor(now / 1000),
    };
    const item = {
      user_id: 'usr_old',
      face_id: 'face_old',
      alias: 'old-face',
      created_at: iso,
      updated_at: iso,
      synced: true,
      sync_started_ms: now,
      synced_token_count: 9,
      billing_source: 'credits',
    };
    const doc = {
      ...item,
      id: 'doc_old',
      label: 'old',
      source: 'submit',
      token_count: 9,
      type: 'document',
      perspective: 'third-person',
      face_speaker: null,
      version: 1,
      content: CONTENT,
    };
    const thread = {
      ...item,
      id: 'thr_old',
      label: 'talk',
      source: 'submit',
      token_count: 2,
      synced: false,
      sync_started_ms: null,
      synced_token_count: null,
      billing_source: null,
      messages: [{ role: 'user', content: 'Hello there', from: 'Ada' }],
      messages_archived: 3,
      override: 'credits',
    };
    const record = {
      id: `key_AAAAAAAA:idem-1`,
      request_hash: createHash('sha256').update(`POST /v1/compile/documents\n`).update(docBody).digest('hex'),
      status: 201,
      body: null,
      doc_ref: { document_id: 'doc_old', version: 1, prefix, suffix },
      created_ms: now,
    };
    const snapshot = JSON.stringify({
      format: 'facectl-serve-state',
      version: 1,
      saved_at: iso,
      collections: { users: [user], keys: [key], faces: [face] },
    });
    const journal =
      `${JSON.stringify({
        ops: [
          ['put', 'documents', doc],
          ['put', 'idempotency', record],
        ],
      })}\n` +
      `${JSON.stringify({
        ops: [
          ['put', 'threads', thread],
          [
            'put',
            'connections',
            { id: 'usr_old:example', user_id: 'usr_old', provider: 'example', connected_at: iso, token_sha256: 'ab' },
          ],
        ],
      })}\n` +
      // A write a crash cut short: never acknowledged, left out.
      '{"ops":[["put","faces",{"id":"face_torn","user_id":"usr_old","alias":"torn-face"';
    writeFileSync(file, snapshot);
    writeFileSync(`${file}.journal`, journal);
    return { snapshot, journal };
  }

  test('every record comes over (the torn line does not); the old files stay beside it as *.imported', async () => {
    tmp = tempDir();
    const file = join(tmp.dir, 'state.json');
    const old = writeOldState(file);
    const svc = await start(file);
    expect(readdirSync(tmp.dir).sort()).toEqual([
      'state.json',
      'state.json-wal',
      'state.json.imported',
      'state.json.journal.imported',
    ]);
    expect(readFileSync(`${file}.imported`, 'utf8')).toBe(old.snapshot);
    expect(readFileSync(`${file}.journal.imported`, 'utf8')).toBe(old.journal);

    // The old key still works, with its budget, spending and allow-list.
    const current = expectContract('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key: SECRET }), 200);
    expect(current).toMatchObject({
      name: 'kept key',
      budget_usd: 2.5,
      spent_usd: 0.001234,
      allowed_llm_models: ['model-a'],
    });
    const face = await call(svc, 'getFace', { key: SECRET, params: { face_id: 'old-face' } });
    expectContract('getFace', face, 200);
    expect(face.text).toContain('"basic_facts":{"born":1815,"__proto__":"kept as data"}');
    expectError(
      'getFace',
      await call(svc, 'getFace', { key: SECRET, params: { face_id: 'torn-face' } }),
      404,
      'face_not_found',
    );
    const doc = expectContract(
      'getDocument',
      await call(svc, 'getDocument', { key: SECRET, params: { document_id: 'doc_old' } }),
      200,
    );
    expect(doc).toMatchObject({ content: CONTENT, synced: true, billing_source: 'credits', version: 1 });
    const thread = expectContract(
      'getThread',
      await call(svc, 'getThread', { key: SECRET, params: { thread_id: 'thr_old' } }),
      200,
    );
    expect(thread).toMatchObject({
      messages: [{ role: 'user', content: 'Hello there', name: 'Ada' }],
      messages_archived: 3,
    });
    const links = expectContract('listOAuthConnections', await call(svc, 'listOAuthConnections', { key: SECRET }), 200);
    expect(links[0]).toMatchObject({ connected: true, connected_at: iso });

    // The idempotency record too: a retry of the old request is answered as it was, creating nothing.
    const before = svc.store.count('documents');
    const retry = await request(svc.baseUrl, 'POST', '/v1/compile/documents', {
      key: SECRET,
      rawBody: docBody,
      headers: { 'Idempotency-Key': 'idem-1' },
    });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(prefix + JSON.stringify(CONTENT) + suffix);
    expect(svc.store.count('documents')).toBe(before);

    // Imported once: the next start opens the database as it is.
    await call(svc, 'createFace', { key: SECRET, body: { name: 'New', alias: 'after-import' } });
    await svc.close();
    const again = await start(file);
    expectContract('getFace', await call(again, 'getFace', { key: SECRET, params: { face_id: 'after-import' } }), 200);
    expect(readFileSync(`${file}.imported`, 'utf8')).toBe(old.snapshot);
  });

  test('a journal whose snapshot is gone is imported alone', async () => {
    tmp = tempDir();
    const file = join(tmp.dir, 'state.json');
    writeOldState(file);
    writeFileSync(file, '');
    const svc = await start(file);
    const doc = await call(svc, 'getDocument', { key: svc.key('pro'), params: { document_id: 'doc_old' } });
    // Its owner's records were in the snapshot: the document is there, another user's.
    expectError('getDocument', doc, 404, 'document_not_found');
    expect(svc.store.get('documents', 'doc_old')?.content).toBe(CONTENT);
  });

  // A breaker's find: a thread whose messages were a string was imported, then GET of it answered 500
  // (thread.messages.map is not a function). Refused as other damaged files are, by the built bin.
  test.each([
    ['a string', '"Hello there"', '"messages" is string, not an array'],
    ['a list holding null', '[null]', '"messages"[0] is null, not a record'],
  ])(
    'a thread whose messages are %s -> exit 2 naming the file, the record and the field; the files untouched',
    async (_name, messages, says) => {
      ensureBuilt();
      tmp = tempDir();
      const file = join(tmp.dir, 'state.json');
      const old = writeOldState(file);
      const journal = old.journal.replace(
        '"messages":[{"role":"user","content":"Hello there","from":"Ada"}]',
        `"messages":${messages}`,
      );
      expect(journal).not.toBe(old.journal);
      writeFileSync(`${file}.journal`, journal);
      const result = await runCli(['serve', '--port', '0', '--data', file], { timeoutMs: 10_000 });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(
        `error: --data: ${file}.journal line 2 is corrupt: op 0: the record ${says}; the files were left untouched\n`,
      );
      expect(readFileSync(file, 'utf8')).toBe(old.snapshot);
      expect(readFileSync(`${file}.journal`, 'utf8')).toBe(journal);
      expect(readdirSync(tmp.dir).sort()).toEqual(['state.json', 'state.json.journal']);
    },
  );

  // A breaker's find: a user of a plan the service does not know was imported, then every request of theirs
  // answered 500 (reading its quota). Refused as the messages above are.
  test.each(['platinum', 'Pro'])(
    'a user of plan %j -> exit 2 naming the record and the plans; the files untouched',
    async (plan) => {
      ensureBuilt();
      tmp = tempDir();
      const file = join(tmp.dir, 'state.json');
      const old = writeOldState(file);
      const snapshot = old.snapshot.replace('"plan":"connect"', `"plan":"${plan}"`);
      expect(snapshot).not.toBe(old.snapshot);
      writeFileSync(file, snapshot);
      const result = await runCli(['serve', '--port', '0', '--data', file], { timeoutMs: 10_000 });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(
        `--data: ${file}: collections.users[0] "plan" is "${plan}", not one of free, standard, pro, connect; the file was left untouched`,
      );
      expect(readFileSync(file, 'utf8')).toBe(snapshot);
      expect(readFileSync(`${file}.journal`, 'utf8')).toBe(old.journal);
      expect(readdirSync(tmp.dir).sort()).toEqual(['state.json', 'state.json.journal']);
    },
  );

  test('a record that cannot be imported stops the start naming it; the old files stay exactly as they were', async () => {
    tmp = tempDir();
    const file = join(tmp.dir, 'state.json');
    const broken = JSON.stringify({
      format: 'facectl-serve-state',
      version: 1,
      collections: { faces: [{ id: 'face_x', user_id: 'usr_x', alias: 'x' }] },
    });
    writeFileSync(file, broken);
    await expect(startTestService({ dataFile: file })).rejects.toThrow(/faces record face_x cannot be imported/);
    expect(readFileSync(file, 'utf8')).toBe(broken);
    expect(readdirSync(tmp.dir)).toEqual(['state.json']);
  });
});

describe('case 58: a file serve does not read is refused, naming it, and left untouched (the built bin)', () => {
  beforeAll(() => ensureBuilt(), 120_000);

  test.each([
    [
      'a newer facectl database',
      (db: InstanceType<typeof Database>) => {
        db.exec(`PRAGMA application_id = ${APPLICATION_ID}; PRAGMA user_version = 99; CREATE TABLE later (x);`);
      },
      'database version 99 is not one this facectl serve reads',
    ],
    [
      "another program's database",
      (db: InstanceType<typeof Database>) =>
        db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY); INSERT INTO orders VALUES (1);'),
      'is an SQLite database of another program, not a facectl serve state',
    ],
  ])('%s -> exit 2', async (_name, fill, says) => {
    tmp = tempDir();
    const file = join(tmp.dir, 'state.db');
    const db = new Database(file);
    fill(db);
    db.close();
    const bytes = readFileSync(file);
    const result = await runCli(['serve', '--port', '0', '--data', file]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(file);
    expect(result.stderr).toContain(says);
    expect(result.stderr).toContain('left untouched');
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(readdirSync(tmp.dir)).toEqual(['state.db']);
  });
});

test("a facectl serve database cut short -> exit 2 naming it damaged, left untouched (a breaker's find: exit 1, unnamed)", async () => {
  ensureBuilt();
  tmp = tempDir();
  const file = join(tmp.dir, 'state.db');
  const svc = await start(file);
  await call(svc, 'createFace', { key: svc.key('pro'), body: { name: 'Ada', alias: 'ada' } });
  await svc.close();
  const bytes = readFileSync(file).subarray(0, 8192);
  writeFileSync(file, bytes);
  const result = await runCli(['serve', '--port', '0', '--data', file]);
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toContain(
    `error: --data: ${file}: a damaged database (database disk image is malformed); it was left untouched\n` +
      'restore it from a copy of yours, or point --data at another file (a new one starts empty)\n',
  );
  expect(readFileSync(file).equals(bytes)).toBe(true);
  expect(readdirSync(tmp.dir)).toEqual(['state.db']);
});

describe('401 for a key serve does not know says why (issue 22, item 8)', () => {
  const unknown = 'fcs_ZZZZZZZZ_0123456789abcdefghijABCDEFGHIJKL';

  test('without --data: keys of an earlier start are gone; use one this run printed, or --data', async () => {
    const svc = await start();
    const body = expectError(
      'getCurrentApiKey',
      await call(svc, 'getCurrentApiKey', { key: unknown }),
      401,
      'not_authenticated',
    );
    expect(body.detail).toContain('started without --data, so it forgets its keys at each start');
    expect(body.detail).toContain('keep state across starts with --data FILE');
    expect(body.detail).not.toContain(unknown.slice(13));
  });

  test('a key not of the form fcs_<id>_<secret> (mistyped): not a key of this service, no guess about --data', async () => {
    tmp = tempDir();
    for (const svc of [await start(), await start(join(tmp.dir, 'state.db'))]) {
      const answer = await call(svc, 'getCurrentApiKey', { key: 'garbage' });
      const body = expectError('getCurrentApiKey', answer, 401, 'not_authenticated');
      expect(body.detail).toBe('invalid API key: not a key of this service');
    }
  });

  test('with --data: not a key of this service (its keys are kept in its --data file)', async () => {
    tmp = tempDir();
    const svc = await start(join(tmp.dir, 'state.db'));
    const body = expectError(
      'getCurrentApiKey',
      await call(svc, 'getCurrentApiKey', { key: unknown }),
      401,
      'not_authenticated',
    );
    expect(body.detail).toContain('its keys are kept in its --data file');
  });

  test('the CLI shows it: a key of an earlier serve without --data, after a restart', async () => {
    ensureBuilt();
    const first = await start();
    const key = first.key('pro');
    await first.close();
    const second = await start();
    const result = await runCli(['auth', 'status'], {
      env: { FACECTL_API_KEY: key, FACECTL_BASE_URL: second.baseUrl },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('started without --data, so it forgets its keys at each start');
    expect(result.stderr).not.toContain(key.slice(13));
  });
});

describe('a rolled-back request leaves nothing behind, not even in what serve keeps read', () => {
  test('a charge read back inside a request that then fails is not seen by the next request', async () => {
    const svc = await start();
    const keyId = [...svc.store.values('keys')].find((k) => k.bootstrap && k.name?.includes('pro'))?.id as string;
    const store = svc.store as import('../../src/service/store.js').Store;
    const before = store.keyWithUser(keyId)?.user.credits_micro as number;
    // A request that charges the user, reads the key and user back (as the next request of a batch
    // would), then fails: its savepoint is rolled back.
    expect(() =>
      store.request(() => {
        const { user } = store.keyWithUser(keyId) as { user: { credits_micro: number } };
        store.put('users', { ...user, credits_micro: before - 1_000_000 } as never);
        expect(store.keyWithUser(keyId)?.user.credits_micro).toBe(before - 1_000_000);
        throw new Error('the disk refused the next write');
      }),
    ).toThrow('the disk refused');
    expect(store.keyWithUser(keyId)?.user.credits_micro).toBe(before);
    expect(store.get('users', store.keyWithUser(keyId)?.user.id as string)?.credits_micro).toBe(before);
  });
});

describe('the requests of one batch: each all or nothing, the new rows written at the commit', () => {
  /** A document record as a submit makes it (store.insertNew). */
  const newDocument = (userId: string, faceId: string, alias: string, id: string) => ({
    id,
    user_id: userId,
    face_id: faceId,
    alias,
    label: id,
    source: 'submit',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    token_count: 1,
    synced: false,
    sync_started_ms: null,
    synced_token_count: null,
    billing_source: null,
    type: 'document' as const,
    perspective: 'third-person' as const,
    face_speaker: null,
    version: 1,
    content: `content of ${id}`,
  });

  test('a request that fails without writing does not undo the request before it in the same batch', async () => {
    const svc = await start();
    const store = svc.store;
    const user = [...store.values('users')].find((u) => u.plan === 'pro');
    if (!user) throw new Error('no pro user');
    // Two requests in one turn of the event loop share a transaction: the first writes, the second
    // only reads and then fails. Only the second is undone.
    const first = store.request(() => store.put('users', { ...user, credits_micro: 42 }));
    expect(() =>
      store.request(() => {
        store.get('users', user.id);
        throw new Error('refused');
      }),
    ).toThrow('refused');
    await first;
    expect(store.get('users', user.id)?.credits_micro).toBe(42);
  });

  test('a new row written at the commit: gone with its failed request, seen by the later ones of its batch', async () => {
    const svc = await start();
    const store = svc.store;
    const face = await call(svc, 'createFace', {
      key: svc.users[2]?.key as string,
      body: { name: 'Batch', alias: 'batch-face' },
    });
    const faceId = expectContract('createFace', face, 201).uid;
    const user = [...store.values('users')].find((u) => u.plan === 'pro') as { id: string };
    const doc = (id: string) => newDocument(user.id, faceId, 'batch-face', id);
    const kept = store.request(() => {
      store.insertNew('documents', doc('doc_kept'));
      store.defer('SELECT 1', [], 'marker', 'kept');
    });
    expect(() =>
      store.request(() => {
        store.insertNew('documents', doc('doc_failed'));
        store.defer('SELECT 1', [], 'failed-marker', 'failed');
        throw new Error('refused');
      }),
    ).toThrow('refused');
    const seen = store.request(() => [store.pending('marker'), store.pending('failed-marker')]);
    // Not in the table before the commit, which writes it.
    expect(store.get('documents', 'doc_kept')).toBeUndefined();
    await kept;
    expect(await seen).toEqual(['kept', undefined]);
    expect(store.get('documents', 'doc_kept')?.content).toBe('content of doc_kept');
    expect(store.get('documents', 'doc_failed')).toBeUndefined();
    // After the commit nothing is pending any more.
    expect(await store.request(() => store.pending('marker'))).toBeUndefined();
  });

  test('a repeat in the same batch as its first request is replayed from the record not yet written', async () => {
    const { Idempotency, serializeBody } = await import('../../src/service/idempotency.js');
    const svc = await start();
    const store = svc.store;
    const idempotency = new Idempotency(store, { now: () => new Date() });
    const auth = store.keyWithUser(
      [...store.values('keys')].find((k) => k.bootstrap && k.name?.includes('pro'))?.id as string,
    ) as NonNullable<ReturnType<typeof store.keyWithUser>>;
    const face = expectContract(
      'createFace',
      await call(svc, 'createFace', { key: svc.key('pro'), body: { name: 'Once', alias: 'once-face' } }),
      201,
    );
    const raw = Buffer.from('{"alias":"once-face"}');
    const asked = Idempotency.request(auth, 'in-one-batch', 'POST', '/v1/compile/documents', raw);
    const answer = { document_id: 'doc_pending', version: 1, content: 'content of doc_pending', alias: 'once-face' };
    const first = store.request(() => {
      expect(idempotency.replay(auth, asked)).toBeNull();
      // As a submit does: the new document, then the record of the answer that shows it.
      store.insertNew('documents', newDocument(auth.user.id, face.uid, 'once-face', 'doc_pending'));
      idempotency.keep(auth, asked, { status: 201, holdsSecret: false, ...serializeBody(answer) });
    });
    // The same turn of the event loop: the first request's record is not in the table yet.
    const again = store.request(() => idempotency.replay(auth, asked));
    const other = Idempotency.request(auth, 'in-one-batch', 'POST', '/v1/compile/documents', Buffer.from('{}'));
    expect(() => store.request(() => idempotency.replay(auth, other))).toThrow('different request');
    await first;
    expect(await again).toEqual({ status: 201, body: JSON.stringify(answer) });
  });

  test('a sync kept, then its document edited, in one batch: a repeat of the sync still gets the first answer', async () => {
    const { Idempotency, serializeBody } = await import('../../src/service/idempotency.js');
    const svc = await start();
    const store = svc.store;
    const key = svc.key('pro');
    expectContract(
      'createFace',
      await call(svc, 'createFace', { key, body: { name: 'Edit', alias: 'edit-face' } }),
      201,
    );
    const created = await call(svc, 'createDocument', {
      key,
      body: { alias: 'edit-face', label: 'edited', content: 'the first content' },
    });
    const shown = expectContract('createDocument', created, 201);
    const idempotency = new Idempotency(store, { now: () => new Date() });
    const auth = store.keyWithUser(
      [...store.values('keys')].find((k) => k.bootstrap && k.name?.includes('pro'))?.id as string,
    ) as NonNullable<ReturnType<typeof store.keyWithUser>>;
    const path = `/v1/compile/documents/${shown.document_id}/sync`;
    const asked = Idempotency.request(auth, 'sync-then-edit', 'POST', path, Buffer.alloc(0));
    // One turn of the event loop: the sync's answer (version 1) is kept, then an edit makes version 2.
    const synced = store.request(() =>
      idempotency.keep(auth, asked, { status: 200, holdsSecret: false, ...serializeBody({ ...shown }) }),
    );
    const edited = store.request(() => {
      const doc = store.get('documents', shown.document_id);
      if (!doc) throw new Error('no document');
      idempotency.beforeDocumentEdit(doc);
      store.put('documents', { ...doc, content: 'the second content', version: 2 });
    });
    await synced;
    await edited;
    expect(await store.request(() => idempotency.replay(auth, asked))).toEqual({
      status: 200,
      body: JSON.stringify(shown),
    });
  });

  test('concurrent repeats of a document submit (one Idempotency-Key): one document, the same answer for all', async () => {
    const svc = await start();
    const key = svc.users[2]?.key as string;
    expectContract(
      'createFace',
      await call(svc, 'createFace', { key, body: { name: 'Same', alias: 'same-face' } }),
      201,
    );
    const before = svc.store.count('documents');
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        call(svc, 'createDocument', {
          key,
          body: { alias: 'same-face', label: 'once', content: 'submitted eight times at once' },
          headers: { 'Idempotency-Key': 'same-submit' },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(7);
    expect(svc.store.count('documents')).toBe(before + 1);
  });
});

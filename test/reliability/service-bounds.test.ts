import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeConnection } from '../../src/service/database.js';
import { Store } from '../../src/service/store.js';
import { chunkLongPieces, MAX_PIECE } from '../../src/service/token-count.js';
import { tokenizerPath } from '../../src/service/tokenizer-path.js';
import { countTokens, loadTokenizer, workerStats } from '../../src/service/tokens.js';
import { race, rounds } from '../helpers/concurrent.js';
import { BIN, runCli } from '../helpers/run-cli.js';
import { startServeProcess } from '../helpers/serve-process.js';
import {
  call,
  createFace,
  expectContract,
  expectError,
  startTestService,
  type TestService,
  textOfTokens,
} from '../helpers/service.js';
import { ensureBuilt, tempDir } from './support.js';

// Cases 43, 48, 49 and 58 of docs/reliability.md: the local service under two serves on one file,
// hostile sizes and shapes of input, and state files it must not load.

// A face whose view fails (a stand-in for any answer that cannot be produced after the change was made).
vi.mock('../../src/service/views.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/service/views.js')>();
  return {
    ...real,
    faceView: (face: Parameters<typeof real.faceView>[0]) => {
      if (face.alias === 'unanswerable') throw new Error('the view of this face fails');
      return real.faceView(face);
    },
  };
});

const CONTENDER = fileURLToPath(new URL('../helpers/serve-contender.mjs', import.meta.url));

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

/** Letters without spaces, the same on every run (a fixed-seed generator). */
function letters(n: number, seed = 12345): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    out.push(String.fromCharCode(97 + ((seed >>> 8) % 26)));
  }
  return out.join('');
}

/** Waits until `condition` holds (checked every few milliseconds, up to 20 s). */
async function until(condition: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 20_000; !condition();) {
    if (Date.now() > deadline) throw new Error('the condition never held');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** One round of case 43: `processes` serves started at once on `dataFile`; each one's report. */
async function serveRound(
  dataFile: string,
  round: number,
  processes: number,
  writes: number,
  tag: string,
): Promise<ContenderReport[]> {
  const roundDir = join(tempDir(), `round-${tag}`);
  mkdirSync(roundDir);
  const results = await race(
    Array.from({ length: processes }, () => ({
      command: process.execPath,
      args: [CONTENDER, BIN, dataFile, roundDir, String(processes), String(writes), tag],
    })),
    { timeoutMs: 90_000 },
  );
  return results.map((r) => {
    expect(r.code, `round ${round}: ${r.stderr}`).toBe(0);
    return JSON.parse(r.stdout.trim()) as ContenderReport;
  });
}

interface ContenderReport {
  running: boolean;
  code: number | string | null;
  created?: string[];
  /** Writes of a running serve not answered 201: what they got. */
  failed?: string[];
  stderr?: string;
}

describe('local service: two at once, hostile sizes, bad state files', () => {
  it("case 43: a serve refused because the file is in use leaves the running one's lock as it was", async () => {
    ensureBuilt();
    const dataFile = join(tempDir(), 'state.json');
    svc = await startTestService({ dataFile });
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(() => Store.open(dataFile)).toThrow(`${dataFile} is in use by another facectl serve`);
    }
    // The lock still holds for other processes too: refused attempts did not let go of it.
    const other = await runCli(['serve', '--port', '0', '--data', dataFile]);
    expect(other.code).toBe(5);
    expect(other.stderr).toContain(`${dataFile} is in use by another facectl serve`);
    // The running serve still saves: its change is there after a restart.
    expectContract(
      'createFace',
      await call(svc, 'createFace', { key: svc.key('pro'), body: { name: 'K', alias: 'kept' } }),
      201,
    );
    await svc.close();
    svc = undefined;
    const store = Store.open(dataFile);
    expect(store.faceByAlias([...store.values('users')].find((u) => u.plan === 'pro')?.id ?? '', 'kept')).toBeDefined();
    store.abandon();
  });

  it('case 48: a 1 MiB run of one letter, and 1 MiB of letters without spaces, are encoded in bounded chunks', async () => {
    const count = await loadTokenizer();
    // Byte-pair merging is quadratic in its input: every call must stay within one chunk.
    // The encoding module the service counts with (tokenizer-path.ts), not another copy of it.
    const encoding = createRequire(import.meta.url)(tokenizerPath()) as {
      default: { bytePairEncodingCoreProcessor: { bytePairMerge(bytes: Uint8Array): number[] } };
    };
    const core = encoding.default.bytePairEncodingCoreProcessor;
    const merge = core.bytePairMerge;
    let largest = 0;
    core.bytePairMerge = function (this: unknown, bytes: Uint8Array) {
      largest = Math.max(largest, bytes.length);
      if (bytes.length > MAX_PIECE * 4) throw new Error(`a byte-pair merge of ${bytes.length} bytes`);
      return merge.call(this, bytes);
    };
    try {
      expect(count('a'.repeat(1 << 20))).toBe((1 << 20) / 8);
      expect(count(letters(1 << 20))).toBeGreaterThan(1 << 18);
      expect(count(`${'\u{1F600}'.repeat(300)}x`)).toBeGreaterThan(0);
    } finally {
      core.bytePairMerge = merge;
    }
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThanOrEqual(MAX_PIECE * 4);
  });

  it("case 48: the library's merge cache is off, on the event loop and in the workers (its evictions made 4 MiB of unlike pieces take 26 s, not 3)", async () => {
    const count = await loadTokenizer();
    const encoding = createRequire(import.meta.url)(tokenizerPath()) as {
      default: { bytePairEncodingCoreProcessor: { mergeCache?: Map<string, unknown> } };
    };
    // Base64 text: pieces that are all unlike, the case that cache handled worst. Counted, nothing kept.
    expect(count(Buffer.from(letters(60_000)).toString('base64'))).toBeGreaterThan(10_000);
    expect(encoding.default.bytePairEncodingCoreProcessor.mergeCache).toBeUndefined();
    // The workers run chunkLongPieces' source on their own copy of the encoding.
    const sizes: number[] = [];
    chunkLongPieces({
      bytePairStringRankEncoder: new Map(),
      tokenSplitRegex: /x/,
      bytePairEncode: () => [],
      setMergeCacheSize: (size: number) => sizes.push(size),
    });
    expect(sizes).toEqual([0]);
  });

  it('case 48: a text with long pieces is counted in a worker, to the same count as on the event loop', async () => {
    const count = await loadTokenizer();
    for (const text of [
      'a'.repeat(20_000),
      `start ${letters(70_000)} end`,
      `${'\u{1F600}'.repeat(5_000)} and ${'Zz'.repeat(3_000)}`,
    ]) {
      const before = workerStats().sent;
      expect(await countTokens(text)).toBe(count(text));
      expect(workerStats().sent).toBe(before + 1);
    }
    // Ordinary text stays on the event loop.
    const before = workerStats().sent;
    expect(await countTokens(textOfTokens(5_000))).toBe(5_000);
    expect(workerStats().sent).toBe(before);
  });

  it('case 48: while a 1 MiB word is counted, other requests are answered; stopping ends the count at once', async () => {
    svc = await startTestService();
    const key = svc.key('pro');
    await createFace(svc, key, 'long-word');
    const pending = call(svc, 'createDocument', {
      key,
      body: { alias: 'long-word', label: 'one long word', content: letters(1 << 20) },
    });
    await until(() => workerStats().inProgress > 0);
    for (let n = 0; n < 5; n++) expectContract('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key }), 200);
    expect(workerStats().inProgress).toBeGreaterThan(0);
    const closing = svc.close();
    const answer = await pending;
    await closing;
    svc = undefined;
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ code: 'service_stopping' });
    expect(workerStats().inProgress).toBe(0);
  });

  it("case 48: a thread's messages of long runs are counted as a document of their size is: another user is answered meanwhile", async () => {
    // Each message alone was small enough to count on the event loop, so 10,000 of them held it for 4.5 s.
    svc = await startTestService();
    const key = svc.key('pro');
    await createFace(svc, key, 'long-runs');
    const created = await call(svc, 'createThread', { key, body: { alias: 'long-runs', label: 'long runs' } });
    const { thread_id } = expectContract('createThread', created, 201);
    const content = 'x'.repeat(1000);
    const messages = Array.from({ length: 2_000 }, () => ({ role: 'user', content, from: 'Ada' }));
    const sent = workerStats().sent;
    let answered = false;
    const pending = call(svc, 'replaceThreadMessages', { key, params: { thread_id }, body: { messages } }).finally(
      () => (answered = true),
    );
    await until(() => workerStats().sent > sent || answered);
    const other = await call(svc, 'getCurrentApiKey', { key: svc.key('free') });
    expectContract('getCurrentApiKey', other, 200);
    expect(answered).toBe(false);
    const replaced = expectContract('replaceThreadMessages', await pending, 200);
    expect(replaced.token_count).toBe(2_000 * (await loadTokenizer())(content));
    expect(replaced.token_count).toBe(250_000);
  });

  it('a large replace-messages still being counted when a later one is answered: 409, the later stays (a ring saw it undone)', async () => {
    svc = await startTestService();
    const key = svc.key('pro');
    await createFace(svc, key, 'stale-runs');
    const created = await call(svc, 'createThread', { key, body: { alias: 'stale-runs', label: 'stale' } });
    const { thread_id } = expectContract('createThread', created, 201);
    const big = Array.from({ length: 2_000 }, () => ({ role: 'user', content: 'x'.repeat(1000), from: 'Ada' }));
    const sent = workerStats().sent;
    let answered = false;
    const first = call(svc, 'replaceThreadMessages', { key, params: { thread_id }, body: { messages: big } }).finally(
      () => (answered = true),
    );
    await until(() => workerStats().sent > sent || answered);
    const later = [{ role: 'user', content: 'the fix', from: 'Ada' }];
    const fix = await call(svc, 'replaceThreadMessages', { key, params: { thread_id }, body: { messages: later } });
    expect(expectContract('replaceThreadMessages', fix, 200).message_count).toBe(1);
    expect(answered).toBe(false);
    expectError('replaceThreadMessages', await first, 409, 'thread_changed');
    const now = expectContract('getThread', await call(svc, 'getThread', { key, params: { thread_id } }), 200);
    expect(now.messages?.map((m: { content: string }) => m.content)).toEqual(['the fix']);
  });

  it('case 49: a body nested deeper than 64 levels -> 422 before anything is stored', async () => {
    const dataFile = join(tempDir(), 'state.json');
    svc = await startTestService({ dataFile });
    const key = svc.key('pro');
    const deep = (levels: number) => {
      let text = '1';
      for (let n = 0; n < levels; n++) text = `{"k":${text}}`;
      return text;
    };
    // The body is level 1 and basic_facts level 2: 62 more levels inside it make 64.
    const face = (alias: string, levels: number) =>
      call(svc as TestService, 'createFace', {
        key,
        rawBody: `{"name":"Deep","alias":"${alias}","basic_facts":${deep(levels + 1)}}`,
      });
    expectContract('createFace', await face('deep-ok', 62), 201);
    for (const levels of [63, 6_000, 200_000]) {
      const refused = expectError('createFace', await face('deep', levels), 422, 'validation_error');
      expect(refused.detail[0]).toMatchObject({ loc: ['body'], type: 'too_deep' });
      expect(refused.detail[0].msg).toContain('64 levels');
    }
    expectError('getFace', await call(svc, 'getFace', { key, params: { face_id: 'deep' } }), 404, 'face_not_found');
    expectContract('createFace', await face('deep', 3), 201);
    // Nothing deep reached the state: it saves and loads as ever.
    await svc.close();
    svc = undefined;
    const store = Store.open(dataFile);
    expect([...store.values('faces')].map((f) => f.alias).sort()).toEqual(['deep', 'deep-ok']);
    store.abandon();
  });

  it('case 49: a request whose answer cannot be produced stores nothing', async () => {
    const dataFile = join(tempDir(), 'state.json');
    svc = await startTestService({ dataFile });
    const key = svc.key('pro');
    const res = await call(svc, 'createFace', { key, body: { name: 'U', alias: 'unanswerable' } });
    expectError('createFace', res, 500, 'internal_error');
    expectError(
      'getFace',
      await call(svc, 'getFace', { key, params: { face_id: 'unanswerable' } }),
      404,
      'face_not_found',
    );
    // A retry is not a conflict with a face the client was told failed.
    expectError(
      'createFace',
      await call(svc, 'createFace', { key, body: { name: 'U', alias: 'unanswerable' } }),
      500,
      'internal_error',
    );
    await createFace(svc, key, 'answerable');
    await svc.close();
    svc = undefined;
    const store = Store.open(dataFile);
    expect([...store.values('faces')].map((f) => f.alias)).toEqual(['answerable']);
    store.abandon();
  });

  it('case 58: a --data file of an unknown version or a wrong shape -> exit 2 naming the file and the problem, file untouched', async () => {
    ensureBuilt();
    const snapshot = (fields: object) =>
      JSON.stringify({ format: 'facectl-serve-state', version: 1, collections: {}, ...fields });
    const cases: { name: string; file: string; journal?: string; says: string }[] = [
      {
        name: 'version 99',
        file: snapshot({ version: 99 }),
        says: 'state file version 99 is not one this facectl serve reads',
      },
      {
        name: 'no version',
        file: snapshot({ version: undefined }),
        says: ': has no "version"; the file was left untouched',
      },
      {
        name: 'collections: []',
        file: snapshot({ collections: [] }),
        says: '"collections" is an array, not an object',
      },
      {
        name: 'collections: null',
        file: snapshot({ collections: null }),
        says: '"collections" is null, not an object',
      },
      {
        name: 'a collection not an array',
        file: snapshot({ collections: { faces: {} } }),
        says: 'collections.faces is an object, not an array',
      },
      {
        name: 'a record without id',
        file: snapshot({ collections: { faces: [{ alias: 'x' }] } }),
        says: 'collections.faces[0] has no "id"',
      },
      {
        name: 'a record not an object',
        file: snapshot({ collections: { users: [7] } }),
        says: 'collections.users[0] is number, not a record',
      },
      {
        name: 'an unknown collection',
        file: snapshot({ collections: { widgets: [] } }),
        says: 'unknown collection "widgets"',
      },
      {
        name: 'another format',
        file: JSON.stringify({ format: 'something-else', version: 1 }),
        says: '"format" is "something-else"',
      },
      { name: 'an array', file: '[1,2,3]', says: 'the file holds an array, not a state object' },
      {
        name: 'an object of another kind',
        file: '{"not":"state"}',
        says: 'has no "format", not "facectl-serve-state"',
      },
      {
        name: 'not JSON',
        file: '{"format": "facectl-serve-state", ',
        says: 'is neither a facectl serve database nor the JSON state file of an older facectl',
      },
      {
        // A ring's find: SQLite took a file this short for an empty database and wrote one over it.
        name: 'one brace',
        file: '{',
        says: 'is neither a facectl serve database nor the JSON state file of an older facectl',
      },
      {
        name: 'a few bytes',
        file: '\x17\x01 noise',
        says: 'is neither a facectl serve database nor the JSON state file of an older facectl (it does not begin as JSON)',
      },
      {
        // Not quoted back: JSON.parse's message would show its first bytes.
        name: 'binary bytes',
        file: '\x17\x01\u00e9\u02aa binary noise',
        says: 'is neither a facectl serve database nor the JSON state file of an older facectl (it does not begin as JSON)',
      },
      {
        name: 'a journal op of a wrong shape',
        file: snapshot({}),
        journal: '{"ops":[["put","faces",{"alias":"x"}]]}\n',
        says: 'state.json.journal line 1 is corrupt: op 0: the record has no "id"',
      },
      {
        name: 'a journal op of an unknown kind',
        file: snapshot({}),
        journal: '{"ops":[]}\n{"ops":[["patch","faces","x"]]}\n',
        says: 'state.json.journal line 2 is corrupt: op 0 is neither "put" nor "del"',
      },
    ];
    for (const c of cases) {
      const dir = tempDir();
      const dataFile = join(dir, 'state.json');
      writeFileSync(dataFile, c.file);
      // Left untouched, its mode too.
      chmodSync(dataFile, 0o644);
      if (c.journal !== undefined) writeFileSync(`${dataFile}.journal`, c.journal);
      const before = readdirSync(dir).sort();
      const result = await runCli(['serve', '--port', '0', '--data', dataFile]);
      expect(result.code, `${c.name}: ${result.stderr}`).toBe(2);
      expect(result.stderr, c.name).toContain(dataFile);
      expect(result.stderr, c.name).toContain(c.says);
      expect(result.stderr, c.name).not.toContain('binary noise');
      expect(result.stderr, c.name).toContain('left untouched');
      expect(result.stdout, c.name).toBe('');
      expect(readFileSync(dataFile, 'utf8'), c.name).toBe(c.file);
      expect(statSync(dataFile).mode & 0o777, c.name).toBe(0o644);
      if (c.journal !== undefined) expect(readFileSync(`${dataFile}.journal`, 'utf8'), c.name).toBe(c.journal);
      // Nothing added (no snapshot, no journal, no lock left behind).
      expect(readdirSync(dir).sort(), c.name).toEqual(before);
    }
  }, 120_000);

  it('case 43: after a serve killed with kill -9 (its WAL left behind), N serves at once -> exactly one runs each round', async () => {
    ensureBuilt();
    const dataFile = join(tempDir(), 'state.json');
    const runners: number[] = [];
    const created: string[] = [];
    for (let round = 0; round < 3; round++) {
      // A serve that dies holding the lock (the system drops it with the process) and leaves its WAL.
      const killed = await startServeProcess(['--data', dataFile]);
      await killed.kill();
      expect(existsSync(`${dataFile}-wal`)).toBe(true);
      const reports = await serveRound(dataFile, round, 6, 2, `k${round}`);
      const running = reports.filter((r) => r.running);
      runners.push(running.length);
      for (const r of running) created.push(...(r.created ?? []));
    }
    const store = Store.open(dataFile);
    const stored = new Set([...store.values('faces')].map((face) => face.alias));
    store.abandon();
    console.log(
      `case 43 (stale lock): 3 rounds x 6 processes, runners per round [${runners.join(', ')}], ${created.length} writes, ${created.filter((a) => !stored.has(a)).length} lost`,
    );
    expect(runners).toEqual([1, 1, 1]);
    expect(created).toHaveLength(6);
    expect(created.filter((alias) => !stored.has(alias))).toEqual([]);
  }, 300_000);

  it('case 43: a serve on a new --data file another serve holds while it makes it a database waits for it, for a bounded time', async () => {
    ensureBuilt();
    // The hold of a serve started at the same instant, between reading the empty file and making it a
    // database: a read lock kept (exclusive locking mode), which alone made the other serve refuse.
    const hold = (file: string) => {
      const Database = createRequire(import.meta.url)('libsql') as typeof import('libsql');
      const db = new Database(file, { timeout: 0 });
      db.exec('PRAGMA locking_mode = EXCLUSIVE');
      db.prepare('PRAGMA application_id').get();
      return db;
    };
    // Let go of within the wait: this serve runs, on the file it was given.
    const dataFile = join(tempDir(), 'state.db');
    writeFileSync(dataFile, '', { mode: 0o600 });
    const briefly = hold(dataFile);
    const release = setTimeout(() => closeConnection(briefly, false), 400);
    const serve = await startServeProcess(['--data', dataFile]).finally(() => clearTimeout(release));
    expectContract(
      'createFace',
      await call(serve, 'createFace', { key: serve.key('pro'), body: { name: 'W', alias: 'waited' } }),
      201,
    );
    await serve.stop();
    expect(statSync(dataFile).size).toBeGreaterThan(0);
    // Held for good: refused once the wait is over (seconds, not forever), saying why.
    const heldFile = join(tempDir(), 'held.db');
    writeFileSync(heldFile, '', { mode: 0o600 });
    const forGood = hold(heldFile);
    try {
      const started = Date.now();
      const refused = await runCli(['serve', '--port', '0', '--data', heldFile], { timeoutMs: 15_000 });
      expect(refused.timedOut).toBe(false);
      expect(refused.code).toBe(5);
      expect(refused.stderr).toContain(`${heldFile} is in use by another facectl serve`);
      expect(Date.now() - started).toBeLessThan(12_000);
    } finally {
      closeConnection(forGood, false);
    }
    expect(statSync(heldFile).size).toBe(0);
  }, 60_000);

  it('case 43: N serves started at once on a new --data file, round after round -> exactly one runs each round', async () => {
    ensureBuilt();
    const ROUNDS = 20;
    const PROCESSES = 4;
    const runners: number[] = [];
    await rounds(ROUNDS, async (round) => {
      const dataFile = join(tempDir(), `new-${round}.db`);
      const reports = await serveRound(dataFile, round, PROCESSES, 1, `n${round}`);
      const running = reports.filter((r) => r.running);
      runners.push(running.length);
      for (const r of running) expect(r.created, `round ${round}: ${r.failed?.join('; ')} ${r.stderr}`).toHaveLength(1);
      for (const r of reports.filter((x) => !x.running)) {
        expect(r.code, `round ${round}: ${r.stderr}`).toBe(5);
        expect(r.stderr).toContain(`${dataFile} is in use by another facectl serve`);
      }
    });
    console.log(
      `case 43 (new files): ${ROUNDS} rounds x ${PROCESSES} processes, runners per round [${runners.join(', ')}]`,
    );
    expect(runners).toEqual(Array.from({ length: ROUNDS }, () => 1));
  }, 600_000);

  it('case 43: N serves started at once on one --data file -> exactly one runs, nothing answered 201 lost', async () => {
    ensureBuilt();
    const dataFile = join(tempDir(), 'state.json');
    const ROUNDS = 8;
    const PROCESSES = 6;
    const WRITES = 3;
    const runners: number[] = [];
    const created: string[] = [];
    const refusals: string[] = [];
    await rounds(ROUNDS, async (round) => {
      const reports = await serveRound(dataFile, round, PROCESSES, WRITES, `r${round}`);
      const running = reports.filter((r) => r.running);
      runners.push(running.length);
      for (const r of running) {
        // Stopped by SIGTERM, cleanly: exit 0.
        expect(r.code).toBe(0);
        created.push(...(r.created ?? []));
      }
      for (const r of reports.filter((x) => !x.running)) {
        // Refused because the file is in use: exit 5, a conflict (not a usage error), naming the file.
        expect(r.code).toBe(5);
        expect(r.stderr).toContain(`${dataFile} is in use by another facectl serve`);
        refusals.push(r.stderr ?? '');
      }
    });
    // A restart: what the next serve on the file loads.
    const store = Store.open(dataFile);
    const stored = new Set([...store.values('faces')].map((face) => face.alias));
    store.abandon();
    const lost = created.filter((alias) => !stored.has(alias));
    console.log(
      `case 43: ${ROUNDS} rounds x ${PROCESSES} processes, runners per round [${runners.join(', ')}], ` +
        `${created.length} writes answered 201, ${lost.length} lost after restart`,
    );
    expect(runners).toEqual(Array.from({ length: ROUNDS }, () => 1));
    expect(created).toHaveLength(ROUNDS * WRITES);
    expect(lost).toEqual([]);
    expect(refusals).toHaveLength(ROUNDS * (PROCESSES - 1));
  }, 600_000);
});

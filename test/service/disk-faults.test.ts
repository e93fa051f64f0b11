import { execFileSync, spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { BIN } from '../helpers/run-cli.js';
import { ensureBuilt, type ServeProcess, startServeProcess } from '../helpers/serve-process.js';
import { Store } from '../../src/service/store.js';
import { call, expectContract, expectError, type Json } from '../helpers/service.js';
import { type SmallDisk, smallDisk } from '../helpers/small-disk.js';

/**
 * Issue 21, findings 1 and 2, with the built `facectl serve --data` on a disk that runs out of room
 * (test/helpers/small-disk.ts: a small tmpfs, or the process's file size limit; each test runs both
 * ways that this machine allows, and at least one). The disk fills while serve runs, empties again,
 * and serve is killed with SIGKILL and started again on the same file.
 */

beforeAll(() => ensureBuilt(), 120_000);

let disk: SmallDisk | undefined;
const processes: ServeProcess[] = [];
afterEach(async () => {
  for (const running of processes.splice(0)) await running.kill();
  disk?.cleanup();
  disk = undefined;
});

/** The ways this machine can run the tests: a tmpfs when it can be mounted, the file size limit always. */
function kinds(): ('tmpfs' | 'ulimit')[] {
  try {
    smallDisk('tmpfs').cleanup();
    return ['tmpfs', 'ulimit'];
  } catch {
    return ['ulimit'];
  }
}

function storedLabels(file: string): string[] {
  const store = Store.open(file);
  try {
    return [...store.values('documents')].map((doc) => doc.label).sort();
  } finally {
    store.close();
  }
}

const text = (kib: number, seed: string) => `${seed} `.repeat(Math.ceil((kib * 1024) / (seed.length + 1)));

async function newDocument(service: ServeProcess, content: string, label: string) {
  return call(service, 'createDocument', { key: service.key('pro'), body: { alias: 'disk-face', label, content } });
}

/** serve --data on a small disk of that kind (kept in `disk`), with the face the documents go to. */
async function serveWithFace(
  kind: 'tmpfs' | 'ulimit',
): Promise<{ file: string; serve: ServeProcess; small: SmallDisk }> {
  const small = smallDisk(kind);
  disk = small;
  const file = join(small.dir, 'state.db');
  const serve = await small.start(file);
  processes.push(serve);
  const face = { key: serve.key('pro'), body: { name: 'Disk', alias: 'disk-face' } };
  expectContract('createFace', await call(serve, 'createFace', face), 201);
  return { file, serve, small };
}

async function getDocument(service: ServeProcess, id: string): Promise<Json> {
  return call(service, 'getDocument', { key: service.key('pro'), params: { document_id: id } });
}

test('a stop whose log cannot be folded into the file (a size limit) says to keep the two files together; nothing is lost', async () => {
  const { file, serve } = await serveWithFace('ulimit');
  const kept = expectContract('createDocument', await newDocument(serve, text(300, 'kept'), 'kept'), 201);
  // The log holds the document; the file may not grow to take it in.
  execFileSync('prlimit', ['--pid', String(serve.pid), `--fsize=${statSync(file).size + 4096}:`]);
  await serve.stop();
  expect(serve.stderr()).toContain(
    `${file}-wal holds changes that could not be folded into ${file} (no room?): keep the two files together`,
  );
  expect(serve.stderr()).toContain(`facectl serve stopped; state saved to ${file} and ${file}-wal`);
  const again = await startServeProcess(['--data', file]);
  processes.push(again);
  expect(expectContract('getDocument', await getDocument(again, kept.document_id), 200).content).toBe(kept.content);
  await again.stop();
  expect(again.stderr()).not.toContain('-wal holds changes');
});

describe.each(kinds())('a full disk under serve --data (%s)', (kind) => {
  test('finding 1: a write that failed on a full disk leaves the file sound: after kill -9 the restart keeps every 201', async () => {
    const { file, serve, small } = await serveWithFace(kind);
    const before = expectContract('createDocument', await newDocument(serve, text(4, 'before'), 'before'), 201);

    small.fill(serve.pid);
    expectError('createDocument', await newDocument(serve, text(80, 'refused'), 'refused'), 500, 'storage_error');
    small.free(serve.pid);
    const after = expectContract('createDocument', await newDocument(serve, text(4, 'after'), 'after'), 201);

    await serve.kill();
    const again = await startServeProcess(['--data', file]);
    processes.push(again);
    for (const doc of [before, after]) {
      expect(expectContract('getDocument', await getDocument(again, doc.document_id), 200).content).toBe(doc.content);
    }
    // And the one answered 500 is not there.
    await again.stop();
    expect(storedLabels(file)).toEqual(['after', 'before']);
  });

  test('finding 2: an edit and a sync answered with an error on a full disk changed nothing, then or after a restart', async () => {
    disk = smallDisk(kind);
    const file = join(disk.dir, 'state.db');
    const serve = await disk.start(file);
    processes.push(serve);
    const key = serve.key('pro');
    await call(serve, 'createFace', { key, body: { name: 'Disk', alias: 'disk-face' } });
    const doc = expectContract('createDocument', await newDocument(serve, text(4, 'original'), 'doc'), 201);
    const quota = async (service: ServeProcess) =>
      expectContract('getDocument', await getDocument(service, doc.document_id), 200).tokens_used as number;
    const used = await quota(serve);

    disk.fill(serve.pid);
    const edit = await call(serve, 'editDocument', {
      key,
      params: { document_id: doc.document_id },
      body: { content: text(80, 'edited') },
    });
    expectError('editDocument', edit, 500, 'storage_error');
    const sync = await call(serve, 'syncDocument', { key, params: { document_id: doc.document_id } });
    expectError('syncDocument', sync, 500, 'storage_error');
    disk.free(serve.pid);

    const unchanged = { version: 1, content: doc.content, synced: false, billing_source: null };
    expect(expectContract('getDocument', await getDocument(serve, doc.document_id), 200)).toMatchObject(unchanged);
    expect(await quota(serve)).toBe(used);
    await serve.kill();
    const again = await startServeProcess(['--data', file]);
    processes.push(again);
    expect(expectContract('getDocument', await getDocument(again, doc.document_id), 200)).toMatchObject(unchanged);
    expect(await quota(again)).toBe(used);
  });

  test('a start that cannot write its --data file names the file and why, exit 1', () => {
    disk = smallDisk(kind);
    const file = join(disk.dir, 'state.db');
    const args = [BIN, 'serve', '--data', file, '--port', '0', '--json'];
    // No room from the start: the disk full, or a size limit of one 512-byte block (SIGXFSZ ignored).
    if (kind === 'tmpfs') disk.fill(0);
    const started =
      kind === 'tmpfs'
        ? spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 30_000 })
        : spawnSync('/bin/sh', ['-c', `trap '' XFSZ; ulimit -S -f 1; exec "$0" "$@"`, process.execPath, ...args], {
            encoding: 'utf8',
            timeout: 30_000,
          });
    expect(started.status).toBe(1);
    expect(started.stdout).toBe('');
    const { error } = JSON.parse(started.stderr) as { error: { code: string; message: string; hint: string } };
    expect(error.code).toBe('storage_error');
    expect(error.message).toMatch(
      new RegExp(
        `^cannot start the local service: ${file} could not be written \\((no room: database or disk is full|disk I/O error)\\)$`,
      ),
    );
    expect(error.hint).toContain('free some room on its disk, or give --data a file on another disk');
    if (error.message.includes('disk I/O error')) expect(error.hint).toContain('a file size limit (ulimit -f)');
  });
});

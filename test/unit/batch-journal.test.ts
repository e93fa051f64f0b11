import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bodyHash, KEEP_FINISHED, openBatchJournal } from '../../src/state/batch-journal.js';
import { CliError, ExitCode, UsageError } from '../../src/errors.js';
import { acquireLock } from '../../src/state/lock.js';
import { makeTempDir } from '../helpers/temp.js';

const fresh = () => makeTempDir('facectl-journal-');
const open = (dir: string, mode: 'new' | 'resume' | 'restart' = 'new', identity = 'file:/data/batch.ndjson') =>
  openBatchJournal({ dir, identity, sourceName: 'batch.ndjson', mode });

describe('batch journal', () => {
  it('records acknowledged lines in a 0600 file that --resume reads back; complete() keeps it as the finished record', async () => {
    const dir = fresh();
    const first = await open(dir);
    expect(first.resumed).toBe(false);
    expect(first.earlier.size).toBe(0);
    first.record({ line: 1, hash: 'a'.repeat(32), document_id: 'doc_1', token_count: 5 });
    first.record({ line: 3, hash: 'b'.repeat(32), document_id: 'doc_3', token_count: 7 });
    await first.close();
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'batches')).mode & 0o777).toBe(0o700);

    const second = await open(dir, 'resume');
    expect(second.resumed).toBe(true);
    expect([...second.earlier.values()]).toEqual([
      { line: 1, hash: 'a'.repeat(32), document_id: 'doc_1', token_count: 5 },
      { line: 3, hash: 'b'.repeat(32), document_id: 'doc_3', token_count: 7 },
    ]);
    // The same batch, so the same Idempotency-Key for the same line and body.
    expect(second.idempotencyKey(2, 'c'.repeat(32))).toBe(first.idempotencyKey(2, 'c'.repeat(32)));
    expect(second.finished).toBe(false);
    await second.complete();
    const finishedPath = second.path.replace(/\.ndjson$/, '.finished');
    expect(readdirSync(join(dir, 'batches'))).toEqual([finishedPath.split('/').pop()]);
    expect(statSync(finishedPath).mode & 0o777).toBe(0o600);

    // --resume of the finished batch: the same batch (same keys), its lines all earlier ones.
    const third = await open(dir, 'resume');
    expect(third).toMatchObject({ resumed: true, finished: true });
    expect([...third.earlier.keys()]).toEqual([1, 3]);
    expect(third.idempotencyKey(2, 'c'.repeat(32))).toBe(first.idempotencyKey(2, 'c'.repeat(32)));
    await third.complete();
    // A plain run starts a new batch whatever finished before; the finished record is not an unfinished one.
    const fourth = await open(dir, 'new');
    expect(fourth).toMatchObject({ resumed: false, finished: false });
    expect(fourth.earlier.size).toBe(0);
    await fourth.complete();
    expect(readdirSync(join(dir, 'batches'))).toEqual([finishedPath.split('/').pop()]);
    // That new batch's record replaced the old one: nothing of the first batch is left to resume.
    const fifth = await open(dir, 'resume');
    expect(fifth).toMatchObject({ resumed: true, finished: true });
    expect(fifth.earlier.size).toBe(0);
    await fifth.close();
  });

  it('finished records are bounded: one per input, and only the KEEP_FINISHED most recent inputs', async () => {
    const dir = fresh();
    const batches = join(dir, 'batches');
    const finishedNames = () => readdirSync(batches).filter((name) => name.endsWith('.finished'));
    for (let run = 0; run < 3; run++) {
      const journal = await open(dir, run === 0 ? 'new' : 'resume', 'file:/same.ndjson');
      journal.record({ line: run + 1, hash: 'a'.repeat(32), document_id: `doc_${run}`, token_count: 1 });
      await journal.complete();
    }
    expect(finishedNames()).toHaveLength(1);
    let last = '';
    for (let i = 0; i < KEEP_FINISHED + 5; i++) {
      const journal = await open(dir, 'new', `file:/input-${i}.ndjson`);
      journal.record({ line: 1, hash: 'a'.repeat(32), document_id: `doc_${i}`, token_count: 1 });
      await journal.complete();
      last = journal.path.replace(/\.ndjson$/, '.finished');
    }
    expect(finishedNames()).toHaveLength(KEEP_FINISHED);
    expect(existsSync(last)).toBe(true);
    expect(readdirSync(batches).filter((name) => !name.endsWith('.finished'))).toEqual([]);
  });

  it('a plain run over an unfinished record is refused (exit 2) and leaves the record as it was', async () => {
    const dir = fresh();
    const first = await open(dir);
    first.record({ line: 1, hash: 'a'.repeat(32), document_id: 'doc_1', token_count: 5 });
    await first.close();
    const before = readFileSync(first.path, 'utf8');
    const refused = await open(dir).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as UsageError).message).toBe(
      'an earlier batch of batch.ndjson stopped after 1 of its documents were submitted',
    );
    expect((refused as UsageError).hint).toMatch(/--resume .* --restart/);
    expect(readFileSync(first.path, 'utf8')).toBe(before);
    // The refusal released the lock: --restart can run, with a new batch (new keys).
    const restarted = await open(dir, 'restart');
    expect(restarted.earlier.size).toBe(0);
    expect(restarted.idempotencyKey(1, 'a'.repeat(32))).not.toBe(first.idempotencyKey(1, 'a'.repeat(32)));
    await restarted.close();
  });

  it('a record torn by kill -9 and an unreadable line are skipped; the next record starts on its own line', async () => {
    const dir = fresh();
    const first = await open(dir);
    first.record({ line: 1, hash: 'a'.repeat(32), document_id: 'doc_1', token_count: 5 });
    await first.close();
    appendFileSync(first.path, 'not json\n{"line":2,"hash":"bb","document_id":"doc_2","tok');
    const second = await open(dir, 'resume');
    expect([...second.earlier.keys()]).toEqual([1]);
    second.record({ line: 4, hash: 'd'.repeat(32), document_id: 'doc_4', token_count: 1 });
    await second.close();
    const third = await open(dir, 'resume');
    expect([...third.earlier.keys()].sort()).toEqual([1, 4]);
    await third.close();
  });

  it('a lock left by a killed run is exit 5 saying when it is free, taken over once 10 s old; a held one stays', async () => {
    const dir = fresh();
    const journal = await open(dir);
    await journal.close();
    const lock = journal.path.replace(/\.ndjson$/, '.lock');
    // As a run killed with kill -9 leaves it: the lock directory, its owner a process that is gone.
    mkdirSync(lock);
    writeFileSync(join(lock, 'owner.json'), JSON.stringify({ token: 't', pid: 2147483646 }));
    const soon = await open(dir, 'restart').catch((error: unknown) => error);
    expect((soon as CliError).exitCode).toBe(ExitCode.conflict);
    expect((soon as CliError).message).toBe('another facectl (pid 2147483646) is submitting batch.ndjson');
    expect((soon as CliError).hint).toMatch(
      /if it was killed, its lock \(.*\.lock, last touched 0 s ago\) is taken over once it is 10 s old: run the command again in 10 s/,
    );
    // Ten seconds on, untouched (its mtime set back, as time would): taken over.
    const past = new Date(Date.now() - 10_500);
    utimesSync(lock, past, past);
    const taken = await open(dir, 'restart');
    await taken.close();
    expect(existsSync(lock)).toBe(false);
    const held = acquireLock(lock);
    try {
      const busy = await open(dir, 'restart').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(busy).toBeInstanceOf(CliError);
      expect((busy as CliError).exitCode).toBe(ExitCode.conflict);
      expect((busy as CliError).message).toBe(`another facectl (pid ${process.pid}) is submitting batch.ndjson`);
      // The refused run removed nothing: the lock is still the holder's.
      expect(existsSync(join(lock, 'owner.json'))).toBe(true);
    } finally {
      held.release();
    }
  });

  it('inputs are kept apart; an unwritable state directory is a clear error naming it', async () => {
    const dir = fresh();
    const a = await open(dir, 'new', 'file:/a.ndjson');
    const b = await open(dir, 'new', 'file:/b.ndjson');
    expect(a.path).not.toBe(b.path);
    await Promise.all([a.close(), b.close()]);
    // A state directory that is a file (fails for root too, unlike a permission).
    const file = join(fresh(), 'state');
    writeFileSync(file, '');
    await expect(open(file)).rejects.toThrow(/cannot write the batch record .*state\/batches: ENOTDIR/);
  });

  it('the body hash is of the body as sent: any change to it is a new hash', () => {
    const text = JSON.stringify({ alias: 'ada', content: 'x "y" ✓', label: 'l', perspective: 'third-person' });
    expect(bodyHash(text)).toBe(createHash('sha256').update(text).digest('hex').slice(0, 32));
    expect(bodyHash(text.replace('✓', '✓ '))).not.toBe(bodyHash(text));
    expect(bodyHash(text)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a new journal is of format 2; one of another format (1, of earlier builds, or unknown) is not resumed from', async () => {
    const dir = fresh();
    const journal = await open(dir);
    await journal.close();
    expect(JSON.parse(readFileSync(journal.path, 'utf8').split('\n')[0] as string).facectl_batch).toBe(2);
    const header = { batch_id: 'b1', source: 'file:/data/batch.ndjson', created_at: '2026-11-01T00:00:00Z' };
    const record = { line: 2, hash: 'c'.repeat(32), document_id: 'doc_2', token_count: 3 };
    for (const format of [1, 9]) {
      const text = `${JSON.stringify({ facectl_batch: format, ...header })}\n${JSON.stringify(record)}\n`;
      writeFileSync(journal.path, text, { mode: 0o600 });
      // Nothing skipped on a guess: every line is sent again, under a new batch id.
      const other = await open(dir, 'resume');
      expect(other.resumed).toBe(false);
      expect(other.earlier.size).toBe(0);
      expect(other.idempotencyKey(5, 'd'.repeat(32))).not.toContain('-b1-');
      await other.close();
    }
  });
});

describe('issue 22 item 3: the state directory and the files in it', () => {
  const planted = () => {
    const dir = fresh();
    const target = join(makeTempDir('facectl-target-'), 'precious');
    writeFileSync(target, 'precious\n');
    mkdirSync(join(dir, 'batches'), { mode: 0o700 });
    const id = createHash('sha256').update('file:/data/batch.ndjson').digest('hex').slice(0, 24);
    return { dir, target, journal: join(dir, 'batches', `${id}.ndjson`) };
  };

  it('a symlink at the temporary name of a new journal: refused (O_EXCL|O_NOFOLLOW), its target untouched', async () => {
    const { dir, target, journal } = planted();
    symlinkSync(target, `${journal}.${process.pid}.tmp`);
    const error = await open(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).message).toContain(`cannot write the batch record ${journal}: EEXIST`);
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
  });

  it('a journal that is a symlink is not appended to through it on --resume', async () => {
    const { dir, target, journal } = planted();
    writeFileSync(target, '{"facectl_batch":2,"batch_id":"b","source":"s","created_at":"t"}\n');
    const before = readFileSync(target, 'utf8');
    symlinkSync(target, journal);
    const error = await open(dir, 'resume').catch((e: unknown) => e);
    expect((error as CliError).message).toMatch(/cannot write the batch record .*: ELOOP/);
    expect(readFileSync(target, 'utf8')).toBe(before);
  });

  it.each([
    [
      'a state directory others can write to (1777)',
      (dir: string) => chmodSync(dir, 0o1777),
      /state directory .* has mode 1777: its group and everyone can write to it/,
    ],
    [
      'a group-writable batches/',
      (dir: string) => chmodSync(join(dir, 'batches'), 0o770),
      /batch record directory .*batches has mode 0770: its group can write to it/,
    ],
    [
      'batches/ that is a symlink',
      (dir: string) => {
        rmSync(join(dir, 'batches'), { recursive: true });
        symlinkSync(makeTempDir('facectl-elsewhere-'), join(dir, 'batches'));
      },
      /batches is not a directory of facectl's \(it is a symlink\)/,
    ],
  ])('%s: refused with the fix, nothing written', async (_name, spoil, says) => {
    const { dir, target } = planted();
    spoil(dir);
    const error = await open(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).message).toMatch(says);
    expect((error as CliError).message).toContain('refusing to write batch records');
    expect((error as CliError).hint).toMatch(/chmod 700|remove .*batches/);
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
  });
});

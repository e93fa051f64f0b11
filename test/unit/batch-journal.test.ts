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
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyOf } from '../../src/commands/docs/batch-lines.js';
import type { BatchJournal } from '../../src/state/batch-journal.js';
import { KEEP_FINISHED, KEEP_UNFINISHED_SINCE } from '../../src/state/batch-read.js';
import { openBatchRecords } from '../../src/state/batch-records.js';
import { bodyHash, type LineKey, Occurrences } from '../../src/state/line-keys.js';
import { CliError, ExitCode, UsageError } from '../../src/errors.js';
import { acquireLock } from '../../src/state/lock.js';
import { makeTempDir } from '../helpers/temp.js';

const fresh = () => makeTempDir('facectl-journal-');
const FILE = 'file:/data/batch.ndjson';
const inputId = (identity: string) => createHash('sha256').update(identity).digest('hex').slice(0, 24);

interface Run {
  journal: BatchJournal;
  keys: LineKey[];
}

/** A run of a batch of `bodies` (request bodies, in order): compared with the earlier batches, then opened. */
async function run(
  dir: string,
  mode: 'new' | 'resume' | 'restart',
  bodies: string[],
  {
    identity = FILE,
    streamed = false,
    destination = 'key fcs_abcdefgh',
    // Standard input: how many lines came before the batch began (a slow producer: a few), and whether it ended there.
    headLines = bodies.length,
    ended = false,
  } = {},
): Promise<Run> {
  const records = await openBatchRecords({
    dir,
    identity,
    sourceName: 'batch.ndjson',
    mode,
    streamed,
    destination,
  });
  const comparison = records.compare();
  const seen = new Occurrences();
  const keys = bodies.map((content) => keyOf({ alias: 'a', label: 'l', content }, seen));
  const head = keys.slice(0, headLines);
  (streamed ? head : keys).forEach((key, i) => comparison.add(i + 1, key));
  return { journal: await records.open(comparison, streamed ? head : undefined, ended), keys };
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

/** Records every line as acknowledged (document `doc_<body>`). */
function acknowledge({ journal, keys }: Run, only?: number[]): void {
  keys.forEach((key, i) => {
    if (only && !only.includes(i + 1)) return;
    journal.sending(key);
    journal.record({ line: i + 1, ...key, document_id: `doc_${i + 1}`, token_count: i + 1 });
  });
}

const batchNames = (dir: string) => readdirSync(join(dir, 'batches')).sort();

describe('batch journal', () => {
  it('records acknowledged lines in a 0600 file that --resume reads back by content; complete() keeps it as the finished record', async () => {
    const dir = fresh();
    const first = await run(dir, 'new', ['a', 'b', 'c']);
    expect(first.journal.resumed).toBe(false);
    expect(first.journal.earlier.size).toBe(0);
    acknowledge(first, [1, 3]);
    await first.journal.close();
    expect(statSync(first.journal.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'batches')).mode & 0o777).toBe(0o700);
    expect(first.journal.path).toMatch(new RegExp(`/batches/${inputId(FILE)}\\.[\\w-]{16}\\.ndjson$`));

    // Line "c" moved to the top: found by its content all the same, with its earlier line.
    const second = await run(dir, 'resume', ['c', 'a', 'b']);
    expect(second.journal).toMatchObject({ resumed: true, finished: false, path: first.journal.path });
    expect(second.journal.earlier.get(second.keys[0] as LineKey)).toMatchObject({ line: 3, document_id: 'doc_3' });
    expect(second.journal.earlier.get(second.keys[2] as LineKey)).toBeUndefined();
    expect(second.journal.compared).toEqual({ lines: 3, matched: 2, moved: 2, headOnly: 0 });
    // The same batch and the same content, so the same Idempotency-Key wherever the line stands.
    expect(second.journal.idempotencyKey(second.keys[2] as LineKey)).toBe(
      first.journal.idempotencyKey(first.keys[1] as LineKey),
    );
    expect(second.journal.idempotencyKey(second.keys[2] as LineKey)).toMatch(
      /^facectl-batch-[\w-]{16}-[0-9a-f]{32}-1$/,
    );
    await second.journal.complete();
    const finishedName = `${basename(first.journal.path, '.ndjson')}.finished`;
    expect(batchNames(dir)).toEqual([finishedName]);
    expect(statSync(join(dir, 'batches', finishedName)).mode & 0o777).toBe(0o600);

    // --resume of the finished batch: the same batch (same keys), its lines all earlier ones.
    const third = await run(dir, 'resume', ['a', 'b', 'c']);
    expect(third.journal).toMatchObject({ resumed: true, finished: true });
    expect(third.journal.earlier.size).toBe(2);
    expect(third.journal.idempotencyKey(third.keys[1] as LineKey)).toBe(
      first.journal.idempotencyKey(first.keys[1] as LineKey),
    );
    await third.journal.complete();
    // A plain run starts a new batch whatever finished before; its record replaces the file's old one.
    const fourth = await run(dir, 'new', ['a', 'b', 'c']);
    expect(fourth.journal).toMatchObject({ resumed: false, finished: false });
    expect(fourth.journal.idempotencyKey(fourth.keys[0] as LineKey)).not.toBe(
      first.journal.idempotencyKey(first.keys[0] as LineKey),
    );
    fourth.journal.record({ line: 1, ...(fourth.keys[0] as LineKey), document_id: 'doc_again', token_count: 1 });
    await fourth.journal.complete();
    expect(batchNames(dir)).toEqual([`${basename(fourth.journal.path, '.ndjson')}.finished`]);
    const fifth = await run(dir, 'resume', ['a']);
    expect(fifth.journal).toMatchObject({ resumed: true, finished: true });
    expect(fifth.journal.earlier.get(fifth.keys[0] as LineKey)?.document_id).toBe('doc_again');
    await fifth.journal.close();
  });

  it('the same body twice: two keys, each its own record and Idempotency-Key', async () => {
    const dir = fresh();
    const first = await run(dir, 'new', ['x', 'y', 'x']);
    expect(first.keys.map((k) => k.n)).toEqual([1, 1, 2]);
    expect(first.journal.idempotencyKey(first.keys[0] as LineKey)).not.toBe(
      first.journal.idempotencyKey(first.keys[2] as LineKey),
    );
    acknowledge(first);
    await first.journal.close();
    const again = await run(dir, 'resume', ['x', 'x', 'y', 'x']);
    expect(again.keys.map((k) => k.n)).toEqual([1, 2, 1, 3]);
    expect(again.keys.map((k) => again.journal.earlier.get(k)?.document_id)).toEqual([
      'doc_1',
      'doc_3',
      'doc_2',
      undefined,
    ]);
    await again.journal.close();
  });

  it('finished records are bounded: one per file, and only the KEEP_FINISHED most recent inputs', async () => {
    const dir = fresh();
    const finishedNames = () => batchNames(dir).filter((name) => name.endsWith('.finished'));
    for (let i = 0; i < 3; i++) {
      const same = await run(dir, i === 0 ? 'new' : 'resume', ['a', `b${i}`], { identity: 'file:/same.ndjson' });
      acknowledge(same);
      await same.journal.complete();
    }
    expect(finishedNames()).toHaveLength(1);
    let last = '';
    for (let i = 0; i < KEEP_FINISHED + 5; i++) {
      const other = await run(dir, 'new', ['a'], { identity: `file:/input-${i}.ndjson` });
      acknowledge(other);
      await other.journal.complete();
      last = other.journal.path.replace(/\.ndjson$/, '.finished');
    }
    expect(finishedNames()).toHaveLength(KEEP_FINISHED);
    expect(existsSync(last)).toBe(true);
    expect(batchNames(dir).filter((name) => !name.endsWith('.finished'))).toEqual([]);
  });

  it('finished records of batches finished since an unfinished one began are all kept, until it finishes', async () => {
    // A breaker's find: 20 batches run after a slice of a stopped file pruned the slice's record, and the file's
    // --resume made the slice's lines again (1,366 twice), as it no longer knew of them.
    const dir = fresh();
    const finishedNames = () => batchNames(dir).filter((name) => name.endsWith('.finished'));
    const finish = async (identity: string, hoursAgo = 0) => {
      const other = await run(dir, 'new', ['a'], { identity });
      acknowledge(other);
      await other.journal.complete();
      const when = Date.now() / 1000 - hoursAgo * 3600;
      if (hoursAgo > 0) utimesSync(other.journal.path.replace(/\.ndjson$/, '.finished'), when, when);
    };
    for (let i = 0; i < 3; i++) await finish(`file:/old-${i}.ndjson`, 1);
    const stopped = await run(dir, 'new', ['x', 'y'], { identity: 'file:/stopped.ndjson' });
    acknowledge(stopped, [1]);
    await stopped.journal.close();
    for (let i = 0; i < KEEP_FINISHED + 5; i++) await finish(`file:/since-${i}.ndjson`);
    expect(finishedNames()).toHaveLength(KEEP_FINISHED + 5);
    const resumed = await run(dir, 'resume', ['x', 'y'], { identity: 'file:/stopped.ndjson' });
    expect(resumed.journal.pruned).toBe(false);
    acknowledge(resumed, [2]);
    await resumed.journal.complete();
    expect(finishedNames()).toHaveLength(KEEP_FINISHED);
    // A batch left unfinished for good keeps KEEP_UNFINISHED_SINCE at the most: the directory stops growing.
    const left = await run(dir, 'new', ['x', 'y'], { identity: 'file:/left.ndjson' });
    await left.journal.close();
    // The mark of what was pruned is never written through a symlink put in its place (a breaker's find: its target
    // was emptied and touched), nor read from one.
    const victim = join(fresh(), 'victim');
    writeFileSync(victim, 'kept');
    utimesSync(victim, 1, 1);
    const marker = join(dir, 'batches', 'pruned');
    symlinkSync(victim, marker);
    for (let i = 0; i < KEEP_UNFINISHED_SINCE + 3; i++) await finish(`file:/later-${i}.ndjson`);
    expect(finishedNames()).toHaveLength(KEEP_UNFINISHED_SINCE);
    expect([readFileSync(victim, 'utf8'), statSync(victim).mtimeMs]).toEqual(['kept', 1000]);
    rmSync(marker);
    await finish('file:/later-last.ndjson');
    // Its --resume is told that records it would have read are gone (a breaker's 250 batches: 2,001 made twice).
    const later = await run(dir, 'resume', ['x', 'y'], { identity: 'file:/left.ndjson' });
    expect(later.journal.pruned).toBe(true);
    acknowledge(later);
    await later.journal.complete();
    // Finished, its lines are its own: a --resume of it is told nothing (a breaker's find: it was, falsely).
    const again = await run(dir, 'resume', ['x', 'y'], { identity: 'file:/left.ndjson' });
    expect(again.journal.pruned).toBe(false);
    await again.journal.close();
  }, 60_000);

  it('a plain run over lines an unfinished batch acknowledged is refused (exit 2), leaving the record as it was', async () => {
    const dir = fresh();
    const first = await run(dir, 'new', ['a', 'b']);
    acknowledge(first, [1]);
    await first.journal.close();
    const before = readFileSync(first.journal.path, 'utf8');
    // Line "a" now second: still refused.
    const refused = await failure(run(dir, 'new', ['new', 'a', 'b']));
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as UsageError).message).toBe(
      'an earlier batch of batch.ndjson stopped after 1 of its documents was submitted',
    );
    expect((refused as UsageError).hint).toMatch(
      /^pass --resume to send only the lines not yet submitted; --restart sends every line again: the 1 line already submitted is created again, as a duplicate \(the record is .*\.ndjson\)$/,
    );
    expect(readFileSync(first.journal.path, 'utf8')).toBe(before);
    // The refusal released the lock: --restart can run, with a new batch (new keys), the old record gone.
    const restarted = await run(dir, 'restart', ['a', 'b']);
    expect(restarted.journal.earlier.size).toBe(0);
    expect(restarted.journal.idempotencyKey(restarted.keys[0] as LineKey)).not.toBe(
      first.journal.idempotencyKey(first.keys[0] as LineKey),
    );
    expect(existsSync(first.journal.path)).toBe(false);
    await restarted.journal.close();
  });

  it('other lines: a stopped file is refused (written again in another form?); standard input is a batch of its own, and --resume picks the one it overlaps most', async () => {
    const dir = fresh();
    const stopped = await run(dir, 'new', ['a', 'b', 'c']);
    acknowledge(stopped, [1, 2]);
    await stopped.journal.close();
    // Edited since: what --restart makes again is counted of the lines still there as sent (a newcomer's find: one
    // message said 2 recorded and 1 made again).
    expect(await failure(run(dir, 'new', ['a', 'x', 'c']))).toMatchObject({
      code: 'unfinished_batch',
      hint: expect.stringContaining(
        '--restart sends every line again: the 1 line already submitted still in it (of the 2: the others were edited or removed since) is created again, as a duplicate',
      ),
    });
    // The same file with none of the lines recorded: the documents may be those lines in another form.
    expect(await failure(run(dir, 'new', ['x', 'y']))).toMatchObject({
      exitCode: ExitCode.usage,
      code: 'unfinished_batch',
      message:
        'an earlier batch of batch.ndjson stopped after 2 of its documents were submitted, and none of those lines is in it now',
    });
    expect(await failure(run(dir, 'resume', ['x', 'y']))).toMatchObject({ code: 'nothing_to_resume' });
    const stdin = { identity: 'stdin:/work', streamed: true };
    const old = await run(dir, 'new', ['a', 'b', 'c'], stdin);
    acknowledge(old, [1, 2]);
    await old.journal.close();
    const other = await run(dir, 'new', ['x', 'y'], stdin);
    expect(other.journal.path).not.toBe(old.journal.path);
    acknowledge(other, [1]);
    await other.journal.close();
    const backToOld = await run(dir, 'resume', ['a', 'x', 'b', 'c'], stdin);
    expect(backToOld.journal.path).toBe(old.journal.path);
    await backToOld.journal.close();
    const toOther = await run(dir, 'resume', ['y', 'x'], stdin);
    expect(toOther.journal.path).toBe(other.journal.path);
    await toOther.journal.close();
    // An unfinished run that got no answer recorded: a plain run takes its place.
    const silent = await run(dir, 'new', ['q'], { identity: 'file:/silent.ndjson' });
    await silent.journal.close();
    const fresher = await run(dir, 'new', ['q'], { identity: 'file:/silent.ndjson' });
    expect(existsSync(silent.journal.path)).toBe(false);
    await fresher.journal.close();
  });

  it('a line that is JSON but no record (null, a number, a string, an array) is skipped like a torn one; the rest is kept', async () => {
    const dir = fresh();
    const first = await run(dir, 'new', ['a', 'b', 'c']);
    acknowledge(first, [1]);
    await first.journal.close();
    const third = JSON.stringify({ line: 3, ...first.keys[2], document_id: 'doc_3', token_count: 3 });
    appendFileSync(first.journal.path, `null\n42\n"text"\n[]\n{}\n${third}\n`);
    const second = await run(dir, 'resume', ['a', 'b', 'c']);
    expect(second.keys.map((k) => second.journal.earlier.get(k)?.document_id)).toEqual(['doc_1', undefined, 'doc_3']);
    await second.journal.close();
  });

  it('a record torn by kill -9 and an unreadable line are skipped; the next record starts on its own line', async () => {
    const dir = fresh();
    const first = await run(dir, 'new', ['a', 'b', 'c', 'd']);
    acknowledge(first, [1]);
    await first.journal.close();
    const torn = JSON.stringify({ line: 2, ...first.keys[1], document_id: 'doc_2', token_count: 2 }).slice(0, -8);
    appendFileSync(first.journal.path, `not json\n${torn}`);
    const second = await run(dir, 'resume', ['a', 'b', 'c', 'd']);
    expect(second.journal.earlier.size).toBe(1);
    acknowledge(second, [4]);
    await second.journal.close();
    const third = await run(dir, 'resume', ['a', 'b', 'c', 'd']);
    expect(third.keys.map((k) => third.journal.earlier.get(k)?.document_id)).toEqual([
      'doc_1',
      undefined,
      undefined,
      'doc_4',
    ]);
    await third.journal.close();
  });

  it('a lock left by a killed run is exit 5 saying when it is free, taken over once 10 s old; a held one stays', async () => {
    const dir = fresh();
    const journal = (await run(dir, 'new', ['a'])).journal;
    await journal.close();
    const lock = join(dir, 'batches', `${inputId(FILE)}.lock`);
    // As a run killed with kill -9 leaves it: the lock directory, its owner a process that is gone.
    mkdirSync(lock);
    writeFileSync(join(lock, 'owner.json'), JSON.stringify({ token: 't', pid: 2147483646 }));
    const soon = await failure(run(dir, 'restart', ['a']));
    expect((soon as CliError).exitCode).toBe(ExitCode.conflict);
    expect((soon as CliError).message).toBe('another facectl (pid 2147483646) is submitting batch.ndjson');
    expect((soon as CliError).hint).toMatch(
      /if it was killed, its lock \(.*\.lock, last touched 0 s ago\) is taken over once it is 10 s old: run this command again in 10 s/,
    );
    // Ten seconds on, untouched (its mtime set back, as time would), while another run takes it over (its guard
    // there): not "once it is 10 s old ... in 1 s", as a breaker read after 12 s.
    const past = new Date(Date.now() - 12_500);
    utimesSync(lock, past, past);
    mkdirSync(`${lock}.takeover`);
    const guarded = await failure(run(dir, 'restart', ['a']));
    expect((guarded as CliError).hint).toMatch(
      /last touched 12 s ago\) is being taken over \(a run killed while taking it over holds that up to 10 s\): run this command again in a few seconds$/,
    );
    rmSync(`${lock}.takeover`, { recursive: true });
    const taken = await run(dir, 'restart', ['a']);
    await taken.journal.close();
    expect(existsSync(lock)).toBe(false);
    const held = acquireLock(lock);
    try {
      const busy = await failure(run(dir, 'restart', ['a']));
      expect(busy).toBeInstanceOf(CliError);
      expect((busy as CliError).exitCode).toBe(ExitCode.conflict);
      expect((busy as CliError).message).toBe(`another facectl (pid ${process.pid}) is submitting batch.ndjson`);
      // Its holder runs (this process): no countdown, which its heartbeat would make untrue.
      expect((busy as CliError).hint).toBe(
        `that run is still going: wait for it to finish, or stop it (Ctrl-C where it runs, or kill ${process.pid}); then run this command again`,
      );
      // The refused run removed nothing: the lock is still the holder's.
      expect(existsSync(join(lock, 'owner.json'))).toBe(true);
    } finally {
      held.release();
    }
  });

  it('inputs are kept apart; an unwritable state directory is a clear error naming it', async () => {
    const dir = fresh();
    const a = await run(dir, 'new', ['a'], { identity: 'file:/a.ndjson' });
    const b = await run(dir, 'new', ['a'], { identity: 'file:/b.ndjson' });
    expect(a.journal.path).not.toBe(b.journal.path);
    await Promise.all([a.journal.close(), b.journal.close()]);
    // A state directory that is a file (fails for root too, unlike a permission).
    const file = join(fresh(), 'state');
    writeFileSync(file, '');
    const error = await failure(run(file, 'new', ['a']));
    expect((error as CliError).exitCode).toBe(ExitCode.usage);
    expect((error as CliError).message).toBe(
      `refusing to write batch records: the state directory ${file} is not a directory (a file is where it, or a directory above it, would be); nothing was sent`,
    );
    expect((error as CliError).hint).toContain('set FACECTL_STATE_DIR to a directory');
  });

  it('the body hash is of the body as sent: any change to it is a new hash', () => {
    const text = JSON.stringify({ alias: 'ada', content: 'x "y" ✓', label: 'l', perspective: 'third-person' });
    expect(bodyHash(text)).toBe(createHash('sha256').update(text).digest('hex').slice(0, 32));
    expect(bodyHash(Buffer.from(text))).toBe(bodyHash(text));
    expect(bodyHash(text.replace('✓', '✓ '))).not.toBe(bodyHash(text));
    expect(bodyHash(text)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('occurrences count each body apart, however many there are', () => {
    const seen = new Occurrences();
    const hashes = Array.from({ length: 5000 }, (_, i) => bodyHash(`line ${i % 2500}`));
    const counts = hashes.map((hash) => seen.next(hash));
    expect(counts.slice(0, 2500).every((n) => n === 1)).toBe(true);
    expect(counts.slice(2500).every((n) => n === 2)).toBe(true);
    expect(seen.next(hashes[7] as string)).toBe(3);
    // A second pass counts again from nothing.
    seen.clear();
    expect(hashes.slice(0, 3).map((hash) => seen.next(hash))).toEqual([1, 1, 1]);
    expect(seen.next(hashes[2500] as string)).toBe(2);
  });

  it('a new journal is of format 3; one of another format (2 matched lines by number, or unknown) is not resumed from', async () => {
    const dir = fresh();
    const first = await run(dir, 'new', ['a']);
    await first.journal.close();
    expect(JSON.parse(readFileSync(first.journal.path, 'utf8').split('\n')[0] as string).facectl_batch).toBe(3);
    const header = { batch_id: 'b1', source: FILE, created_at: '2026-11-01T00:00:00Z' };
    const record = { line: 1, hash: bodyHash('a'), n: 1, document_id: 'doc_1', token_count: 3 };
    for (const format of [2, 9]) {
      const text = `${JSON.stringify({ facectl_batch: format, ...header })}\n${JSON.stringify(record)}\n`;
      writeFileSync(first.journal.path, text, { mode: 0o600 });
      // Nothing skipped on a guess: --resume finds no batch (refused), a new batch sends every line, under a new id.
      const refused = await failure(run(dir, 'resume', ['a']));
      expect(refused).toMatchObject({ exitCode: ExitCode.usage, code: 'nothing_to_resume' });
      const other = await run(dir, 'new', ['a']);
      expect(other.journal.resumed).toBe(false);
      expect(other.journal.earlier.size).toBe(0);
      expect(other.journal.idempotencyKey(other.keys[0] as LineKey)).not.toContain('-b1-');
      await other.journal.close();
      rmSync(other.journal.path);
    }
  });
});

describe('batches of standard input in one directory', () => {
  const STDIN = 'stdin:/work';
  const streamed = { identity: STDIN, streamed: true };

  it('two inputs at once each have their batch; the same input twice at once: exit 5', async () => {
    const dir = fresh();
    const one = await run(dir, 'new', ['a', 'b'], streamed);
    const two = await run(dir, 'new', ['x', 'y'], streamed);
    expect(two.journal.path).not.toBe(one.journal.path);
    // Nothing acknowledged yet: known by the first lines its header keeps.
    const same = await failure(run(dir, 'resume', ['a', 'b'], streamed));
    expect((same as CliError).exitCode).toBe(ExitCode.conflict);
    expect((same as CliError).message).toBe(`another facectl (pid ${process.pid}) is submitting batch.ndjson`);
    const plain = await failure(run(dir, 'new', ['a', 'b', 'z'], streamed));
    expect((plain as CliError).exitCode).toBe(ExitCode.conflict);
    // One line of two in common is another input: it runs beside, and its record goes once it is done (so does a
    // short input all of whose lines begin a longer one: below).
    const beside = await run(dir, 'new', ['z', 'a'], streamed);
    expect(beside.journal.path).not.toBe(one.journal.path);
    await beside.journal.complete();
    acknowledge(one, [1]);
    await Promise.all([one.journal.close(), two.journal.complete()]);

    // Stopped: a plain run of the same input is refused, another input runs, --resume finds its batch.
    const refused = await failure(run(dir, 'new', ['a', 'b'], streamed));
    expect((refused as UsageError).exitCode).toBe(ExitCode.usage);
    const third = await run(dir, 'new', ['p', 'q'], streamed);
    await third.journal.close();
    const resumed = await run(dir, 'resume', ['a', 'b'], streamed);
    expect(resumed.journal).toMatchObject({ path: one.journal.path, resumed: true, finished: false });
    await resumed.journal.complete();
    const finishedTwo = await run(dir, 'resume', ['x', 'y'], streamed);
    expect(finishedTwo.journal).toMatchObject({ resumed: true, finished: true });
    await finishedTwo.journal.close();
    // An input none of them begins like: nothing to resume, refused (exit 2) with no record made.
    const before = batchNames(dir);
    const unknown = await failure(run(dir, 'resume', ['m'], streamed));
    expect(unknown).toMatchObject({
      exitCode: ExitCode.usage,
      code: 'nothing_to_resume',
      message: `nothing to resume: no batch of batch.ndjson read in /work recorded in ${dir} holds most of its first lines`,
    });
    expect(batchNames(dir)).toEqual(before);
  });

  it('standard input is the same as far as both inputs have first lines: a slow producer resumes; a shorter whole input with lines of its own is another', async () => {
    const lines = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'];
    // Two lines had come when the batch began (a breaker's find: a byte-identical --resume was refused, a plain run
    // made the lines submitted again).
    const dir = fresh();
    const slow = await run(dir, 'new', lines, { ...streamed, headLines: 2 });
    acknowledge(slow, [1, 2, 3, 4]);
    await slow.journal.close();
    expect(await failure(run(dir, 'new', lines, { ...streamed, ended: true }))).toMatchObject({
      code: 'unfinished_batch',
    });
    const resumed = await run(dir, 'resume', lines, { ...streamed, ended: true });
    expect(resumed.journal).toMatchObject({ path: slow.journal.path, resumed: true });
    await resumed.journal.close();
    // The first lines of a stopped input, whole: that input (refused, --resume goes on with it). The same with a line
    // of its own: another input, beside it (a ring's find: its --restart dropped the other's record).
    const other = fresh();
    const stopped = await run(other, 'new', lines, streamed);
    acknowledge(stopped, [1, 2, 3]);
    await stopped.journal.close();
    expect(await failure(run(other, 'new', ['a', 'b'], { ...streamed, ended: true }))).toMatchObject({
      code: 'unfinished_batch',
    });
    // Plain, it is refused all the same: it is mostly lines that batch submitted (part of its input).
    expect(await failure(run(other, 'new', ['a', 'b', 'z'], { ...streamed, ended: true }))).toMatchObject({
      code: 'unfinished_batch',
      message:
        "an unfinished batch of standard input read here submitted 2 of this input's first 3 lines, though this is another input",
    });
    expect(await failure(run(other, 'resume', ['a', 'b', 'z'], { ...streamed, ended: true }))).toMatchObject({
      code: 'nothing_to_resume',
    });
    // Its lines never sent (past those recorded and the one in flight): another input, run (a false refusal before).
    const unclean = fresh();
    const cut = await run(unclean, 'new', lines, streamed);
    acknowledge(cut, [1, 2]);
    cut.journal.sending(cut.keys[2] as LineKey);
    cut.journal.unanswered();
    await cut.journal.close();
    const rest = await run(unclean, 'new', ['g', 'h', 'i', 'j'], { ...streamed, ended: true });
    expect(rest.journal.path).not.toBe(cut.journal.path);
    await rest.journal.close();
    expect(await failure(run(unclean, 'new', ['a', 'b', 'c', 'q'], { ...streamed, ended: true }))).toMatchObject({
      message:
        "an unfinished batch of standard input read here submitted, or may have, 3 of this input's first 4 lines, though this is another input",
    });
    const beside = await run(other, 'restart', ['a', 'b', 'z'], { ...streamed, ended: true });
    expect(beside.journal.path).not.toBe(stopped.journal.path);
    await beside.journal.close();
    expect(existsSync(stopped.journal.path)).toBe(true);
  });

  it('a finished batch replaces the finished record of the same input only', async () => {
    const dir = fresh();
    for (const bodies of [['a', 'b'], ['x'], ['a', 'b']]) {
      const batch = await run(dir, 'new', bodies, streamed);
      acknowledge(batch);
      await batch.journal.complete();
    }
    const names = batchNames(dir);
    expect(names.filter((name) => name.endsWith('.finished'))).toHaveLength(2);
    expect(names.filter((name) => !name.endsWith('.finished'))).toEqual([]);
  });
});

describe('issue 22 item 3: the state directory and the files in it', () => {
  const planted = () => {
    const dir = fresh();
    const target = join(makeTempDir('facectl-target-'), 'precious');
    writeFileSync(target, 'precious\n');
    mkdirSync(join(dir, 'batches'), { mode: 0o700 });
    const id = inputId(FILE);
    return { dir, target, id, journal: join(dir, 'batches', `${id}.AAAAAAAAAAAAAAAA.ndjson`) };
  };

  it('a symlink at the temporary name of a new journal: refused (O_EXCL|O_NOFOLLOW), its target untouched', async () => {
    const { dir, target, id } = planted();
    symlinkSync(target, join(dir, 'batches', `${id}.${process.pid}.tmp`));
    const error = await failure(run(dir, 'new', ['a']));
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).message).toMatch(
      new RegExp(`cannot write the batch record .*/batches/${id}\\.[\\w-]{16}\\.ndjson: EEXIST`),
    );
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
  });

  it('a journal that is a symlink is not appended to through it on --resume', async () => {
    const { dir, target, journal } = planted();
    writeFileSync(target, '{"facectl_batch":3,"batch_id":"AAAAAAAAAAAAAAAA","source":"s","created_at":"t"}\n');
    const before = readFileSync(target, 'utf8');
    symlinkSync(target, journal);
    const error = await failure(run(dir, 'resume', ['a']));
    expect((error as CliError).message).toMatch(/cannot read the batch record .*: ELOOP; nothing was sent$/);
    expect((error as CliError).hint).toMatch(/symbolic link, which facectl does not follow/);
    expect(readFileSync(target, 'utf8')).toBe(before);
  });

  it.each([
    [
      'a state directory others can write to (1777)',
      (dir: string) => chmodSync(dir, 0o1777),
      /state directory .* has mode 1777: its group and everyone can write to it/,
      /^set FACECTL_STATE_DIR to a directory only you can write to \(a missing one is made 0700\); leave \S+ as it is: it is shared, others need to write to it$/,
    ],
    [
      'a group-writable batches/',
      (dir: string) => chmodSync(join(dir, 'batches'), 0o770),
      /batch record directory .*batches has mode 0770: its group can write to it/,
      /^`chmod 700 \S+batches` \(or set FACECTL_STATE_DIR to a directory only you can write to\)$/,
    ],
    [
      'batches/ that is a symlink',
      (dir: string) => {
        rmSync(join(dir, 'batches'), { recursive: true });
        symlinkSync(makeTempDir('facectl-elsewhere-'), join(dir, 'batches'));
      },
      /batches is not a directory of facectl's \(it is a symlink\)/,
      /^remove \S+batches \(facectl makes it again\), or set FACECTL_STATE_DIR to a directory of your own$/,
    ],
  ])('%s: refused with the fix, nothing written', async (_name, spoil, says, fix) => {
    const { dir, target } = planted();
    spoil(dir);
    const error = await failure(run(dir, 'new', ['a']));
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).message).toMatch(says);
    expect((error as CliError).message).toContain('refusing to write batch records');
    expect((error as CliError).exitCode).toBe(ExitCode.usage);
    expect((error as CliError).hint).toMatch(fix);
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
  });
});

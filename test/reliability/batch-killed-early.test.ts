import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { useFaultServer } from '../helpers/hooks.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { runCli } from '../helpers/run-cli.js';
import { slowProxy } from '../helpers/slow-proxy.js';
import {
  batchEnv,
  batchFile,
  journalFiles,
  resultLines,
  start,
  stored,
  tempFile,
  unreachableUrl,
  until,
} from './support.js';

// A batch killed (kill -9) at its earliest moments: before its journal held any record, with lines
// applied by the service. A plain run of the same input must not create them a second time: it is
// refused (exit 2) as for an unfinished batch that acknowledged lines, and --resume leaves exactly one
// document per line. The same for Ctrl-C with requests left unanswered. A batch that stopped cleanly
// with nothing in doubt (the service unreachable) still does not block a plain run.

const server = useFaultServer();
const service = useService({}, { faces: ['ada-early'] });
beforeAll(() => ensureBuilt(), 120_000);

const ROUNDS = 4;
const LINES = 40;

/** Records the journal holds (its lines after the header that are acknowledgments). */
function records(configDir: string): number {
  return journalFiles(configDir)
    .map((path) => readFileSync(path, 'utf8').split('\n').slice(1))
    .flat()
    .filter((line) => line.includes('"document_id"')).length;
}

/**
 * After a killed or stopped run: a plain run of the same input is refused, sending nothing; --resume
 * then submits the rest, each line stored once. Returns what the round saw.
 */
async function refusedThenResumed(
  prefix: string,
  lines: string[],
  env: Record<string, string>,
  input: { file: string } | { stdin: string },
): Promise<{ applied: number; journaled: number }> {
  const direct = { ...env, FACECTL_BASE_URL: service.baseUrl };
  const args = 'file' in input ? ['--file', input.file] : ['-'];
  const stdin = 'stdin' in input ? input.stdin : '';
  const journaled = records(env.FACECTL_CONFIG_DIR as string);
  const applied = stored(service, prefix).length;
  expect(applied, 'the killed run had lines applied by the service').toBeGreaterThan(0);

  const before = service.stats.requests;
  const plain = await runCli(['docs', 'submit', ...args, '--concurrency', '4', '--json'], { env: direct, stdin });
  expect(plain.code, plain.stderr).toBe(2);
  expect(JSON.parse(plain.stderr)).toMatchObject({ error: { code: 'unfinished_batch' } });
  expect(plain.stderr).toContain('--resume');
  expect(plain.stdout).toBe('');
  expect(service.stats.requests).toBe(before);
  expect(stored(service, prefix)).toHaveLength(applied);

  const resumed = await runCli(['docs', 'submit', ...args, '--concurrency', '4', '--json', '--resume'], {
    env: direct,
    stdin,
  });
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(resultLines(resumed.stdout)).toHaveLength(lines.length);
  const labels = stored(service, prefix)
    .map((d) => d.label)
    .sort();
  expect(labels, 'a line was created twice, or not at all').toEqual(
    lines.map((l) => (JSON.parse(l) as { label: string }).label).sort(),
  );
  return { applied, journaled };
}

/**
 * Starts a batch behind a proxy that passes `passed` answers and holds the others, sends it `signal` once `ready`,
 * and waits until the requests it left reached the service. Returns how it ended.
 */
async function stopWhen(
  args: string[],
  env: Record<string, string>,
  ready: { check: () => boolean; what: string },
  { signal = 'SIGKILL' as NodeJS.Signals, passed = 0, stdin = '' } = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const proxy = slowProxy(server, service.baseUrl, 0);
  proxy.holdAfter(passed);
  const run = start(['docs', 'submit', '--concurrency', '4', '--json', ...args], env, stdin);
  let ended;
  try {
    await until(ready.check, ready.what);
    run.child.kill(signal);
    ended = await run.exit;
  } finally {
    proxy.release();
  }
  await until(() => proxy.forwarding() === 0, 'the stopped run’s requests reached the service');
  return { ...ended, stderr: run.stderr() };
}

/** A batch of LINES lines behind the proxy, killed (kill -9) with ten results recorded and four more requests held. */
async function killedAtTen(prefix: string) {
  const { file, lines } = batchFile('ada-early', prefix, LINES);
  const env = batchEnv(service.key('pro'), server.baseUrl);
  const killed = await stopWhen(
    ['--file', file],
    env,
    {
      check: () => stored(service, prefix).length >= 14 && records(env.FACECTL_CONFIG_DIR) >= 10,
      what: 'ten recorded, four held',
    },
    { passed: 10 },
  );
  expect(killed.signal, killed.stderr).toBe('SIGKILL');
  return { file, lines, env, direct: { ...env, FACECTL_BASE_URL: service.baseUrl } };
}

/**
 * Lines 31-40 of a batch killedAtTen (lines it never sent) as a file of their own, run behind the proxy: five answered,
 * four more applied and held, then killed (kill -9). Returns that file.
 */
async function sliceKilled(prefix: string, lines: string[], env: Record<string, string>, name: string) {
  const tail = tempFile(name, `${lines.slice(30).join('\n')}\n`);
  const slice = await stopWhen(
    ['--file', tail],
    env,
    {
      check: () =>
        stored(service, prefix).filter((d) => Number(d.label.slice(prefix.length)) >= 30).length >= 9 &&
        records(env.FACECTL_CONFIG_DIR as string) >= 15,
      what: 'nine of the tail applied, five recorded',
    },
    { passed: 5 },
  );
  expect(slice.signal, slice.stderr).toBe('SIGKILL');
  return tail;
}

/** How many documents each label of this prefix has. */
function labelCounts(prefix: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const d of stored(service, prefix)) counts.set(d.label, (counts.get(d.label) ?? 0) + 1);
  return counts;
}

describe('a batch killed at its earliest moments, then a plain run of the same input', () => {
  it('kill -9 right after its first result line: refused (exit 2); --resume: one document per line', async () => {
    const seen: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const prefix = `first-out-${round}-`;
      const { file, lines } = batchFile('ada-early', prefix, LINES);
      const env = batchEnv(service.key('pro'), server.baseUrl);
      // Answers a little late, so the batch is still going when its first result line comes out.
      const proxy = slowProxy(server, service.baseUrl, 25);
      const run = start(['docs', 'submit', '--file', file, '--concurrency', '4', '--json'], env);
      run.child.stdout.once('data', () => run.child.kill('SIGKILL'));
      expect((await run.exit).signal, run.stderr()).toBe('SIGKILL');
      const printed = run.stdout().split('\n').filter(Boolean).length;
      expect(printed).toBeGreaterThan(0);
      await until(() => proxy.forwarding() === 0, 'the killed run’s requests reached the service');
      const { applied, journaled } = await refusedThenResumed(prefix, lines, env, { file });
      seen.push(`printed=${printed} journaled=${journaled} applied=${applied}`);
    }
    process.stdout.write(`killed after the first result line, ${ROUNDS} rounds: ${seen.join('; ')}\n`);
  }, 120_000);

  it('kill -9 before any output, its first requests applied by the service: refused; --resume: one document per line', async () => {
    const seen: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const prefix = `no-out-${round}-`;
      const { file, lines } = batchFile('ada-early', prefix, LINES);
      const env = batchEnv(service.key('pro'), server.baseUrl);
      const proxy = slowProxy(server, service.baseUrl, 0);
      // Every answer held: the service applies the requests, the run sees none of them.
      proxy.holdAfter(0);
      const run = start(['docs', 'submit', '--file', file, '--concurrency', '4', '--json'], env);
      try {
        await until(() => stored(service, prefix).length > 0, 'a first line applied by the service');
        run.child.kill('SIGKILL');
        expect((await run.exit).signal, run.stderr()).toBe('SIGKILL');
      } finally {
        proxy.release();
      }
      expect(run.stdout()).toBe('');
      await until(() => proxy.forwarding() === 0, 'the killed run’s requests reached the service');
      const { applied, journaled } = await refusedThenResumed(prefix, lines, env, { file });
      expect(journaled).toBe(0);
      seen.push(`applied=${applied}`);
    }
    process.stdout.write(`killed before any output, ${ROUNDS} rounds: ${seen.join('; ')}\n`);
  }, 120_000);

  it('standard input, kill -9 before any output: the same input is refused, a different one runs beside it', async () => {
    const prefix = 'stdin-early-';
    const { file, lines } = batchFile('ada-early', prefix, LINES);
    const input = readFileSync(file, 'utf8');
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 0);
    proxy.holdAfter(0);
    const run = start(['docs', 'submit', '--concurrency', '4', '--json', '-'], env, input);
    try {
      await until(() => stored(service, prefix).length > 0, 'a first line applied by the service');
      run.child.kill('SIGKILL');
      expect((await run.exit).signal, run.stderr()).toBe('SIGKILL');
    } finally {
      proxy.release();
    }
    await until(() => proxy.forwarding() === 0, 'the killed run’s requests reached the service');

    // Another input in the same directory is a batch of its own: not refused.
    const other = batchFile('ada-early', 'stdin-other-', 3);
    const beside = await runCli(['docs', 'submit', '-'], {
      env: { ...env, FACECTL_BASE_URL: service.baseUrl },
      stdin: readFileSync(other.file, 'utf8'),
    });
    expect(beside.code, beside.stderr).toBe(0);
    expect(stored(service, 'stdin-other-')).toHaveLength(3);

    await refusedThenResumed(prefix, lines, env, { stdin: input });
  }, 60_000);

  it('standard input, kill -9: another input sharing a line it may have made is refused; one it cannot have made runs beside', async () => {
    const prefix = 'share-';
    const { lines } = batchFile('ada-early', prefix, LINES);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const direct = { ...env, FACECTL_BASE_URL: service.baseUrl };
    const killed = await stopWhen(
      ['-'],
      env,
      { check: () => stored(service, prefix).length > 0, what: 'a first line applied by the service' },
      { stdin: `${lines.join('\n')}\n` },
    );
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const applied = stored(service, prefix).length;

    // Line 6 among nine others: another input, run beside it, plain or with --restart: the killed batch sent at most
    // its first 4 lines (its --concurrency) past what it recorded (a ring's find: it was refused, and its --restart
    // dropped the killed batch's record, whose --resume then made its documents again).
    const other = batchFile('ada-early', 'beside-share-', 9).lines;
    for (const mode of [[], ['--restart']]) {
      const beside = await runCli(['docs', 'submit', ...mode, '-'], {
        env: direct,
        stdin: `${[lines[5], ...other].join('\n')}\n`,
      });
      expect(beside.code, beside.stderr).toBe(0);
      expect(beside.stderr).not.toContain('restarting');
    }
    // Its first line, which it made, among nine others: refused, as sending would make that line twice (a breaker's
    // find: an input half made of such lines ran).
    const withFirst = [lines[0], ...batchFile('ada-early', 'first-share-', 9).lines];
    const refusedOne = await runCli(['docs', 'submit', '-'], { env: direct, stdin: `${withFirst.join('\n')}\n` });
    expect(refusedOne.code, refusedOne.stderr).toBe(2);
    expect(refusedOne.stderr).toContain(
      "error: an unfinished batch of standard input read here submitted, or may have, 1 of this input's first 10 lines, though this is another input",
    );
    // Only its first lines are read before sending: what --restart makes again is said as a floor (a breaker's find).
    expect(refusedOne.stderr).toContain(
      'that line is created again, as duplicates, and so are any of its later lines that batch submitted',
    );
    expect(stored(service, 'first-share-')).toHaveLength(0);
    // As a file, too (a breaker's find: a file was compared with batches of files only).
    const asFile = tempFile('first-share.ndjson', `${withFirst.join('\n')}\n`);
    const refusedFile = await runCli(['docs', 'submit', '--file', asFile], { env: direct });
    expect(refusedFile.code, refusedFile.stderr).toBe(2);
    expect(refusedFile.stderr).toContain(
      `error: 1 of the lines of ${asFile} was submitted, or may have been, by the unfinished batch of standard input read in `,
    );
    expect(refusedFile.stderr).toContain('feed it its own input with --resume there (the record is ');
    expect(stored(service, 'first-share-')).toHaveLength(0);
    // Its first two lines and one of its own: another input, made mostly of lines it may have made: refused, as a
    // copy of part of a file is; --restart sends it as a batch of its own and leaves that batch to resume.
    const part = `${[lines[0], lines[1], other[0]].join('\n')}\n`;
    const refused = await runCli(['docs', 'submit', '-'], { env: direct, stdin: part });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(
      "error: an unfinished batch of standard input read here submitted, or may have, 2 of this input's first 3 lines, though this is another input",
    );
    const restarted = await runCli(['docs', 'submit', '--restart', '-'], { env: direct, stdin: part });
    expect(restarted.code, restarted.stderr).toBe(0);
    expect(restarted.stderr).not.toContain('restarting');
    expect(stored(service, 'beside-share-')).toHaveLength(19);
    // --resume of a third input sharing one line with it is not that batch's either: nothing sent.
    const third = [lines[7], ...batchFile('ada-early', 'third-share-', 9).lines];
    const wrong = await runCli(['docs', 'submit', '--resume', '-'], { env: direct, stdin: `${third.join('\n')}\n` });
    expect(wrong.code, wrong.stderr).toBe(2);
    expect(wrong.stderr).toContain('nothing to resume');
    expect(stored(service, prefix)).toHaveLength(applied + 4);

    const resumed = await runCli(['docs', 'submit', '--json', '--resume', '-'], {
      env: direct,
      stdin: `${lines.join('\n')}\n`,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    // Each line once, and the shared ones again for each run of the other inputs.
    const counts = labelCounts(prefix);
    expect(counts.size).toBe(LINES);
    const shared = [0, 1, 5].map((i) => `${prefix}${i}`);
    expect(shared.map((label) => counts.get(label))).toEqual([2, 2, 3]);
    expect([...counts].filter(([label, n]) => !shared.includes(label) && n !== 1)).toEqual([]);
  }, 60_000);

  it('kill -9 with requests in flight: part of its file (head) is refused as a copy, another part (tail) runs', async () => {
    // A breaker's find: a killed batch was taken to have made every one of its first 100 lines, so a copy of the
    // 8 lines it had submitted was not "most" of them, and ran: 8 documents twice; and a slice of lines never sent
    // was refused. It made at most those it recorded and, past the last of them, as many as it sent at once.
    const prefix = 'slice-';
    const { file, lines, direct } = await killedAtTen(prefix);
    const head = tempFile('head.ndjson', `${lines.slice(0, 8).join('\n')}\n`);
    const before = service.stats.requests;
    const copied = await runCli(['docs', 'submit', '--file', head], { env: direct });
    expect(copied.code, copied.stderr).toBe(2);
    expect(copied.stderr).toContain(
      `error: 8 of the lines of ${head} were submitted by the unfinished batch of ${file}`,
    );
    expect(service.stats.requests).toBe(before);
    const tail = tempFile('tail.ndjson', `${lines.slice(20).join('\n')}\n`);
    const other = await runCli(['docs', 'submit', '--file', tail, '--json'], { env: direct });
    expect(other.code, other.stderr).toBe(0);
    // The tail's lines made by it: the first batch, resumed, reports them with those documents and sends them not
    // (a ring's find: it made them again, 53 documents twice); the head's lines were not made twice either.
    const resumed = await runCli(['docs', 'submit', '--file', file, '--resume', '--json'], { env: direct });
    expect(resumed.code, resumed.stderr).toBe(0);
    const counts = labelCounts(prefix);
    expect(lines.map((_, i) => counts.get(`${prefix}${i}`))).toEqual(lines.map(() => 1));
    expect(resumed.stderr).toContain(
      `${LINES - 20} lines not submitted by this batch were by that of ${tail}: reported with their documents, not sent again`,
    );
    // Each tail line's result is the document the tail's run made.
    const ids = (stdout: string) =>
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { line: number; document_id: string })
        .sort((a, b) => a.line - b.line)
        .map((result) => result.document_id);
    expect(ids(resumed.stdout).slice(20)).toEqual(ids(other.stdout));
  }, 60_000);

  it('a slice of a killed batch, killed itself with requests in flight: --resume of the first sends its unanswered lines under its key, each made once', async () => {
    const prefix = 'twice-killed-';
    const { file, lines, env, direct } = await killedAtTen(prefix);
    const tail = await sliceKilled(prefix, lines, env, 'tail-killed.ndjson');
    const resumed = await runCli(['docs', 'submit', '--file', file, '--resume'], { env: direct });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(
      `5 lines not submitted by this batch were by that of ${tail}: reported with their documents, not sent again`,
    );
    // The slice resumed after that: the lines of it the first batch made are its too (a breaker's find: it made
    // them again, 367 twice).
    const sliceResumed = await runCli(['docs', 'submit', '--file', tail, '--resume'], { env: direct });
    expect(sliceResumed.code, sliceResumed.stderr).toBe(0);
    expect(sliceResumed.stderr).toMatch(
      new RegExp(`\\d+ lines? not submitted by this batch (?:was|were) by that of ${file}: reported with`),
    );
    const counts = labelCounts(prefix);
    expect(lines.map((_, i) => counts.get(`${prefix}${i}`))).toEqual(lines.map(() => 1));
  }, 60_000);

  it("--resume with a new key of the same account, after a slice of its unsent lines ran: those lines go under the slice batch's keys, each made once", async () => {
    const prefix = 'newkey-';
    const { file, lines, direct } = await killedAtTen(prefix);
    const tail = tempFile('tail-newkey.ndjson', `${lines.slice(30).join('\n')}\n`);
    expect((await runCli(['docs', 'submit', '--file', tail], { env: direct })).code).toBe(0);
    // A second key of the same account (a breaker's find: the lines the slice made were made again, 400 twice).
    const created = await runCli(['keys', 'create', '--json'], { env: direct });
    expect(created.code, created.stderr).toBe(0);
    const newKey = (JSON.parse(created.stdout) as { key: string }).key;
    const resumed = await runCli(['docs', 'submit', '--file', file, '--resume'], {
      env: { ...direct, FACECTL_API_KEY: newKey },
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    const counts = labelCounts(prefix);
    expect(lines.map((_, i) => counts.get(`${prefix}${i}`))).toEqual(lines.map(() => 1));
  }, 60_000);

  it('a slice sent with a second key of the same account and killed, the first batch resumed, then the slice: the slice sends its unanswered lines under its own keys, each made once', async () => {
    // A breaker's find: the slice's --resume sent the lines it had sent unanswered under the first batch's keys (that
    // batch had acknowledged them, with another key), and the service made them again: 89 twice.
    const prefix = 'slice-key-';
    const { file, lines, env, direct } = await killedAtTen(prefix);
    const created = await runCli(['keys', 'create', '--json'], { env: direct });
    expect(created.code, created.stderr).toBe(0);
    const second = { FACECTL_API_KEY: (JSON.parse(created.stdout) as { key: string }).key };
    const tail = await sliceKilled(prefix, lines, { ...env, ...second }, 'tail-slice-key.ndjson');
    const resumed = await runCli(['docs', 'submit', '--file', file, '--resume'], { env: direct });
    expect(resumed.code, resumed.stderr).toBe(0);
    const sliceResumed = await runCli(['docs', 'submit', '--file', tail, '--resume'], {
      env: { ...direct, ...second },
    });
    expect(sliceResumed.code, sliceResumed.stderr).toBe(0);
    const counts = labelCounts(prefix);
    expect(lines.map((_, i) => counts.get(`${prefix}${i}`))).toEqual(lines.map(() => 1));
  }, 60_000);

  it.each([
    ['emptied', ''],
    ['overwritten', 'garbage{\n'],
    ['replaced by a symlink', undefined],
    ['replaced by a FIFO', null],
  ])(
    'its record %s: --resume and a slice of its file are refused (exit 1, state_unreadable), nothing sent',
    async (_, text) => {
      // A breaker's find: such a record was taken for no batch at all: `--resume` said "nothing to resume", and a slice
      // of the file ran and made again the lines the killed batch had made (1,660 twice).
      const prefix = `damaged-${text === undefined ? 'link' : text === null ? 'fifo' : text.length}-`;
      const { file, lines, env, direct } = await killedAtTen(prefix);
      const [record] = journalFiles(env.FACECTL_CONFIG_DIR);
      if (text === undefined) {
        renameSync(record as string, `${record}.moved`);
        symlinkSync(`${record}.moved`, record as string);
      } else if (text === null) {
        // A breaker's find: the run hung on opening it, waiting for a writer (11 minutes), and ignored SIGTERM.
        rmSync(record as string);
        execFileSync('mkfifo', ['-m', '600', record as string]);
      } else writeFileSync(record as string, text);
      const before = service.stats.requests;
      const tail = tempFile(`damaged-${prefix}.ndjson`, `${lines.slice(2).join('\n')}\n`);
      for (const args of [
        ['--file', file, '--resume'],
        ['--file', tail],
      ]) {
        const run = await runCli(['docs', 'submit', ...args, '--json'], { env: direct });
        expect(run.code, run.stderr).toBe(1);
        const { error } = JSON.parse(run.stderr) as { error: { code: string; message: string } };
        expect(error.code).toBe('state_unreadable');
        expect(error.message).toMatch(new RegExp(`^cannot read the batch record ${record}: .*; nothing was sent$`));
      }
      expect(service.stats.requests).toBe(before);
    },
    60_000,
  );

  it('kill -9 past its first 100 lines: its lines sent but not recorded, as another file, are refused; --resume makes each once', async () => {
    // Breakers' finds: what a killed batch may have made was known only among its first 100 lines, and bounded by its
    // --concurrency, though a kill -9 also loses the answers of the last 100 ms: lines 305-312 of such a batch, as
    // another file, made 8 documents twice. Each line's key is now on disk before its request.
    const prefix = 'far-';
    const { file, lines } = batchFile('ada-early', prefix, 130);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const killed = await stopWhen(
      ['--file', file],
      env,
      { check: () => stored(service, prefix).length >= 114, what: '110 answered, four more applied, held' },
      { passed: 110 },
    );
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const recorded = new Set(
      journalFiles(env.FACECTL_CONFIG_DIR)
        .flatMap((path) => readFileSync(path, 'utf8').split('\n'))
        .filter((line) => line.includes('"document_id"'))
        .map((line) => (JSON.parse(line) as { line: number }).line),
    );
    // Lines 101-130 the record does not hold as submitted: some of them were made all the same.
    const unrecorded = lines.slice(100).filter((_, i) => !recorded.has(101 + i));
    const made = unrecorded.filter((line) => stored(service, JSON.parse(line).label).length > 0).length;
    expect(made).toBeGreaterThanOrEqual(4);
    const direct = { ...env, FACECTL_BASE_URL: service.baseUrl };
    const slice = tempFile('far.ndjson', `${unrecorded.join('\n')}\n`);
    const before = service.stats.requests;
    const refused = await runCli(['docs', 'submit', '--file', slice], { env: direct });
    expect(refused.code, refused.stderr).toBe(2);
    const said = /error: (\d+) of the lines of \S+ were submitted, or may have been, by the unfinished batch of /.exec(
      refused.stderr,
    );
    expect(Number(said?.[1]), refused.stderr).toBeGreaterThanOrEqual(made);
    // Piped, the same lines are refused too (a breaker's find: standard input was compared with batches of standard
    // input only, and made them twice).
    const piped = await runCli(['docs', 'submit', '-'], { env: direct, stdin: `${unrecorded.join('\n')}\n` });
    expect(piped.code, piped.stderr).toBe(2);
    expect(piped.stderr).toMatch(
      new RegExp(
        `error: \\d+ of the first ${unrecorded.length} lines of standard input were submitted, or may have been, by the unfinished batch of ${file}`,
      ),
    );
    // With --resume, the same: named, not "nothing to resume ... run without --resume", which the plain run refuses
    // (a newcomer went round that circle).
    const pipedResume = await runCli(['docs', 'submit', '-', '--resume'], {
      env: direct,
      stdin: `${unrecorded.join('\n')}\n`,
    });
    expect(pipedResume.code, pipedResume.stderr).toBe(2);
    expect(pipedResume.stderr).toMatch(
      new RegExp(
        `error: nothing to resume: no unfinished batch of standard input was recorded, but \\d+ of its first ${unrecorded.length} lines were submitted, or may have been, by the unfinished batch of ${file}`,
      ),
    );
    expect(pipedResume.stderr).toContain(
      `run \`facectl docs submit --file ${file} --resume\` with the flags it was run with`,
    );
    expect(service.stats.requests).toBe(before);
    const resumed = await runCli(['docs', 'submit', '--file', file, '--resume'], { env: direct });
    expect(resumed.code, resumed.stderr).toBe(0);
    const counts = labelCounts(prefix);
    expect(lines.map((_, i) => counts.get(`${prefix}${i}`))).toEqual(lines.map(() => 1));
  }, 60_000);

  it('Ctrl-C before any answer, its requests applied: refused (they went unanswered); --resume: one document per line', async () => {
    const prefix = 'int-early-';
    const { file, lines } = batchFile('ada-early', prefix, LINES);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 0);
    proxy.holdAfter(0);
    const run = start(['docs', 'submit', '--file', file, '--concurrency', '4', '--json'], env);
    try {
      await until(() => stored(service, prefix).length > 0, 'a first line applied by the service');
      run.child.kill('SIGINT');
      expect((await run.exit).code, run.stderr()).toBe(130);
    } finally {
      proxy.release();
    }
    expect(run.stderr()).toContain(`interrupted: 0 of ${LINES} documents were submitted`);
    await until(() => proxy.forwarding() === 0, 'the stopped run’s requests reached the service');
    const { journaled } = await refusedThenResumed(prefix, lines, env, { file });
    expect(journaled).toBe(0);
  }, 60_000);

  it('a plain run of a finished file, killed: --resume finishes that run, not the finished one, and nothing is left to refuse a plain run', async () => {
    const prefix = 'again-';
    const { file, lines } = batchFile('ada-early', prefix, LINES);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const direct = { ...env, FACECTL_BASE_URL: service.baseUrl };
    const first = await runCli(['docs', 'submit', '--file', file, '--json'], { env: direct });
    expect(first.code, first.stderr).toBe(0);
    // Sent again on purpose (a plain run sends every line), and killed before any answer came back.
    const proxy = slowProxy(server, service.baseUrl, 0);
    proxy.holdAfter(0);
    const run = start(['docs', 'submit', '--file', file, '--concurrency', '4', '--json'], env);
    try {
      await until(() => stored(service, prefix).length > LINES, 'a line of the second run applied');
      run.child.kill('SIGKILL');
      expect((await run.exit).signal, run.stderr()).toBe('SIGKILL');
    } finally {
      proxy.release();
    }
    await until(() => proxy.forwarding() === 0, 'the killed run’s requests reached the service');
    const plain = await runCli(['docs', 'submit', '--file', file, '--json'], { env: direct });
    expect(plain.code, plain.stderr).toBe(2);

    const resumed = await runCli(['docs', 'submit', '--file', file, '--json', '--resume'], { env: direct });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toContain('already finished');
    expect(journalFiles(env.FACECTL_CONFIG_DIR)).toEqual([]);
    // Two runs of every line, each created once: the first batch's, and the second's, finished by --resume.
    const counts = labelCounts(prefix);
    expect([...counts.values()]).toEqual(lines.map(() => 2));
  }, 60_000);

  it('stopped cleanly with nothing in doubt (the service unreachable): a plain run goes ahead', async () => {
    const prefix = 'unreachable-';
    const { file } = batchFile('ada-early', prefix, 5);
    // Every connection refused: nothing can have been created.
    const env = batchEnv(service.key('pro'), await unreachableUrl());
    const down = await runCli(['docs', 'submit', '--file', file, '--json'], { env });
    expect(down.code, down.stderr).toBe(8);
    expect(journalFiles(env.FACECTL_CONFIG_DIR)).toHaveLength(1);

    const plain = await runCli(['docs', 'submit', '--file', file, '--json'], {
      env: { ...env, FACECTL_BASE_URL: service.baseUrl },
    });
    expect(plain.code, plain.stderr).toBe(0);
    expect(stored(service, prefix)).toHaveLength(5);
    expect(journalFiles(env.FACECTL_CONFIG_DIR)).toEqual([]);
  }, 60_000);
});

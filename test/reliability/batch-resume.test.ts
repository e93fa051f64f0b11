import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useFaultServer } from '../helpers/hooks.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { runCli } from '../helpers/run-cli.js';
import { slowProxy } from '../helpers/slow-proxy.js';
import { batchEnv, batchFile, journalFiles, start, stored, storedLabels, tempFile, until } from './support.js';

// Issue 5, item 3: resumable batches. A batch killed with kill -9 (twice), a stdin batch, a line
// edited between runs, two invocations on the same file, --restart and --resume without a record.

const server = useFaultServer();
const service = useService({}, { faces: ['ada-resume'] });
beforeAll(() => ensureBuilt(), 120_000);
const makeBatch = (prefix: string, count: number) => batchFile('ada-resume', `${prefix}-`, count);

/** Every record in a config directory's state directory: unfinished journals and finished records. */
function batchRecords(configDir: string): string[] {
  const dir = join(configDir, 'state', 'batches');
  return existsSync(dir) ? readdirSync(dir).filter((name) => /\.(ndjson|finished)$/.test(name)) : [];
}

/** Each stored document of the batch, by label: every label once, with its line's content. */
/** A string as a regular expression matching it. */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function expectEachOnce(prefix: string, lines: string[]): void {
  const docs = stored(service, `${prefix}-`);
  const labels = docs.map((d) => d.label).sort();
  expect(new Set(labels).size, 'a line was created twice').toBe(labels.length);
  expect(labels).toEqual(lines.map((l) => JSON.parse(l).label).sort());
  const contentOf = new Map(lines.map((l) => [JSON.parse(l).label, JSON.parse(l).content]));
  for (const d of docs) expect(d.content).toBe(contentOf.get(d.label));
}

/**
 * A batch of `file` stopped with Ctrl-C once one line was answered (through a slow proxy), its requests
 * in flight arrived at the service: an unfinished record.
 */
async function stoppedAfterOneAnswer(file: string, env: ReturnType<typeof batchEnv>): Promise<void> {
  const proxy = slowProxy(server, service.baseUrl, 200);
  proxy.holdAfter(1);
  const run = start(['docs', 'submit', '--file', file, '--concurrency', '1'], {
    ...env,
    FACECTL_BASE_URL: server.baseUrl,
  });
  await until(() => proxy.answered() >= 1, 'an answer');
  run.child.kill('SIGINT');
  expect((await run.exit).code).toBe(130);
  await until(() => proxy.forwarding() === 0, 'the stopped run’s requests reached the service');
}

/**
 * After a killed run of `batch`: its every document edited, a plain run and --resume are refused with these errors,
 * sending nothing; put back, --resume makes every line once.
 */
async function refusedOnceRewritten(
  prefix: string,
  batch: string,
  lines: string[],
  env: ReturnType<typeof batchEnv>,
  errors: { plain: string; resume: string },
): Promise<void> {
  const edited = lines.map((l) => JSON.stringify({ ...JSON.parse(l), content: `${JSON.parse(l).content} (edited)` }));
  writeFileSync(batch, `${edited.join('\n')}\n`);
  const direct = { ...env, FACECTL_BASE_URL: service.baseUrl };
  const before = service.stats.requests;
  const plain = await runCli(['docs', 'submit', '--file', batch], { env: direct });
  expect(plain.code, plain.stderr).toBe(2);
  expect(plain.stderr).toContain(`error: ${errors.plain}`);
  const resumed = await runCli(['docs', 'submit', '--file', batch, '--resume'], { env: direct });
  expect(resumed.code, resumed.stderr).toBe(2);
  expect(resumed.stderr).toContain(`error: ${errors.resume}`);
  expect(service.stats.requests).toBe(before);
  writeFileSync(batch, `${lines.join('\n')}\n`);
  const back = await runCli(['docs', 'submit', '--file', batch, '--resume'], { env: direct });
  expect(back.code, back.stderr).toBe(0);
  expectEachOnce(prefix, lines);
}

describe('resumable batches', () => {
  it('kill -9 twice mid-batch, then --resume: every line created exactly once', async () => {
    const { file: batch, lines } = makeBatch('kill9', 40);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 250);
    let kills = 0;
    for (const [extra, stopAt] of [
      [[], 8],
      [['--resume'], 20],
    ] as const) {
      const answeredBefore = proxy.answered();
      proxy.holdAfter(answeredBefore + stopAt / 2);
      const run = start(['docs', 'submit', '--file', batch, '--concurrency', '4', '--json', ...extra], env);
      // Killed with answers received and requests applied by the service but not yet answered.
      await until(() => proxy.answered() - answeredBefore >= stopAt / 2 && proxy.held() > 0, 'a request in flight');
      run.child.kill('SIGKILL');
      const { signal } = await run.exit;
      expect(signal).toBe('SIGKILL');
      kills++;
    }
    expect(journalFiles(env.FACECTL_CONFIG_DIR)).toHaveLength(1);
    const journaled = readFileSync(journalFiles(env.FACECTL_CONFIG_DIR)[0] as string, 'utf8')
      .split('\n')
      .slice(1)
      .filter((l) => l.includes('"document_id"') && l.endsWith('}')).length;
    const createdBeforeResume = stored(service, 'kill9-').length;
    expect(createdBeforeResume).toBeGreaterThan(journaled);

    // A killed run's last request may still be on its way through the proxy: count from when none is.
    await until(() => proxy.forwarding() === 0, "the killed runs' requests reached the service");
    const before = service.stats.requests;
    const final = await runCli(['docs', 'submit', '--file', batch, '--concurrency', '4', '--json', '--resume'], {
      env: { ...env, FACECTL_BASE_URL: service.baseUrl },
    });
    expect(final.code, final.stderr).toBe(0);
    const sent = service.stats.requests - before;
    expect(sent).toBeLessThanOrEqual(40 - journaled);
    expectEachOnce('kill9', lines);
    const results = final.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(results).toHaveLength(40);
    expect(journalFiles(env.FACECTL_CONFIG_DIR)).toEqual([]);
    const duplicates = stored(service, 'kill9-').length - 40;
    process.stdout.write(
      `batch kill -9: lines=40 kills=${kills} journaled-before-resume=${journaled} applied-before-resume=${createdBeforeResume} sent-by-resume=${sent} created=${stored(service, 'kill9-').length} duplicates=${duplicates}\n`,
    );
    expect(duplicates).toBe(0);
  });

  it('standard input: interrupted, then the same input with --resume sends only the rest', async () => {
    const { file: batch, lines } = makeBatch('stdin', 12);
    const input = readFileSync(batch, 'utf8');
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 250);
    proxy.holdAfter(3);
    const run = start(['docs', 'submit', '--concurrency', '1', '--json', '-'], env, input);
    await until(() => proxy.answered() >= 3, 'three answers');
    run.child.kill('SIGINT');
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(130);
    const done = Number(/interrupted: (\d+) documents? were submitted/.exec(run.stderr())?.[1]);
    expect(done).toBeGreaterThanOrEqual(3);
    expect(run.stderr()).toContain(
      'the same standard input to `facectl docs submit - --resume --concurrency 1 --json`',
    );

    await until(() => proxy.forwarding() === 0, 'the stopped run’s requests reached the service');
    const before = service.stats.requests;
    const again = await runCli(['docs', 'submit', '--json', '--resume', '-'], {
      env: { ...env, FACECTL_BASE_URL: service.baseUrl },
      stdin: input,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(service.stats.requests - before).toBe(12 - done);
    expectEachOnce('stdin', lines);
  });

  it('a line edited between runs is sent again (as its new content); unchanged finished lines are not', async () => {
    const { file: batch, lines } = makeBatch('edit', 10);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 200);
    proxy.holdAfter(4);
    const run = start(['docs', 'submit', '--file', batch, '--concurrency', '1', '--json'], env);
    await until(() => proxy.answered() >= 4, 'four answers');
    run.child.kill('SIGINT');
    expect((await run.exit).code).toBe(130);
    const done = Number(/interrupted: (\d+) of 10/.exec(run.stderr())?.[1]);
    expect(done).toBeGreaterThanOrEqual(4);
    // Line 1 was submitted; its content changes before the resume.
    const edited = JSON.stringify({ alias: 'ada-resume', label: 'edit-0', content: 'edit 0, second version' });
    writeFileSync(batch, `${[edited, ...lines.slice(1)].join('\n')}\n`);
    await until(() => proxy.forwarding() === 0, 'the stopped run’s requests reached the service');
    const before = service.stats.requests;
    const again = await runCli(['docs', 'submit', '--file', batch, '--json', '--resume'], {
      env: { ...env, FACECTL_BASE_URL: service.baseUrl },
    });
    expect(again.code, again.stderr).toBe(0);
    expect(service.stats.requests - before).toBe(10 - done + 1);
    const contents = stored(service, 'edit-0').map((d) => d.content);
    expect(contents.sort()).toEqual([JSON.parse(lines[0] as string).content, 'edit 0, second version'].sort());
  });

  it('a stopped batch whose file is written again in another form resumes: its lines are known by their documents', async () => {
    // A breaker's find: the same documents with their keys reordered and spaced otherwise (another tool's JSON) were
    // new lines by their bytes; --resume sent them all and the service held the lines submitted before the stop
    // twice. The batch stops at line 4, whose face does not exist: lines 1-3 recorded, a clean stop.
    const { file: batch, lines } = makeBatch('reform', 6);
    const bad = JSON.stringify({ ...JSON.parse(lines[3] as string), alias: 'no-such-face' });
    writeFileSync(batch, `${[...lines.slice(0, 3), bad, ...lines.slice(4)].join('\n')}\n`);
    const direct = batchEnv(service.key('pro'), service.baseUrl);
    const stopped = await runCli(['docs', 'submit', '--file', batch, '--concurrency', '1'], { env: direct });
    expect(stopped.code, stopped.stderr).toBe(4);
    expect(stored(service, 'reform-')).toHaveLength(3);
    // Another flag completing every line makes every line new (a breaker's find): refused, naming the flags.
    const flagged = await runCli(['docs', 'submit', '--file', batch, '--resume', '--perspective', 'first-person'], {
      env: direct,
    });
    expect(flagged.code).toBe(2);
    expect(flagged.stderr).toContain(
      'completed by another --alias, --label or --perspective, or with the lines already submitted removed',
    );
    expect(stored(service, 'reform-')).toHaveLength(3);
    const reordered = lines.map((l) => {
      const { alias, label, content } = JSON.parse(l) as Record<string, string>;
      return JSON.stringify({ label, content, alias }, null, 1).replace(/\n/g, '');
    });
    writeFileSync(batch, `${reordered.join('\n')}\n`);
    const before = service.stats.requests;
    // A plain run is refused as for the file as it was.
    const plain = await runCli(['docs', 'submit', '--file', batch], { env: direct });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain(
      `error: an earlier batch of ${batch} stopped after 3 of its documents were submitted`,
    );
    expect(service.stats.requests).toBe(before);
    // --resume sends the 3 lines left (line 4 fixed), each line's document once.
    const resumed = await runCli(['docs', 'submit', '--file', batch, '--resume'], { env: direct });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('resuming: 3 already submitted (0 moved), 3 not yet submitted, 0 removed');
    expect(service.stats.requests - before).toBe(3);
    expectEachOnce('reform', lines);
  });

  it('a batch killed with a request in flight whose file is written again in another form: refused as well', async () => {
    // A newcomer's find: after a stop with a request unanswered, the plain run's refusal offered --resume, which sent
    // every rewritten line: the recorded ones and the one in flight were made twice.
    const { file: batch, lines } = makeBatch('rekilled', 6);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 0);
    proxy.holdAfter(2);
    const run = start(['docs', 'submit', '--file', batch, '--concurrency', '1'], env);
    const recorded = () =>
      journalFiles(env.FACECTL_CONFIG_DIR).flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .filter((l) => l.includes('"document_id"')),
      ).length;
    await until(() => recorded() >= 2 && proxy.held() > 0, 'two answers recorded and a request in flight');
    run.child.kill('SIGKILL');
    expect((await run.exit).signal).toBe('SIGKILL');
    await until(() => proxy.forwarding() === 0, 'the killed run’s requests reached the service');
    expect(stored(service, 'rekilled-')).toHaveLength(3);
    const killed = 'did not stop cleanly (it was killed, crashed, or could not write its record)';
    await refusedOnceRewritten('rekilled', batch, lines, env, {
      plain: `an earlier batch of ${batch} ${killed}, after 2 of its documents were submitted, and none of those lines is in it now`,
      resume: `nothing to resume: none of the 2 lines the earlier batch of ${batch} submitted is in it now`,
    });
  });

  it('a batch killed before any answer was recorded whose file is then written again: known by its first lines, refused', async () => {
    // Its requests reached the service, their answers held: documents made, none recorded. The record keeps the
    // file's first lines, so the rewritten file is not taken for the same one.
    const { file: batch, lines } = makeBatch('unanswered', 5);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 0);
    proxy.holdAfter(0);
    const run = start(['docs', 'submit', '--file', batch, '--concurrency', '2'], env);
    await until(() => proxy.held() >= 2, 'two requests applied, their answers held');
    run.child.kill('SIGKILL');
    expect((await run.exit).signal).toBe('SIGKILL');
    proxy.release();
    await until(() => proxy.forwarding() === 0, 'the killed run’s requests reached the service');
    expect(stored(service, 'unanswered-')).toHaveLength(2);
    // Moved, it is known by its first lines too (a breaker's find), the two it had in flight at --concurrency 2: a
    // plain run is refused, nothing sent.
    renameSync(batch, `${batch}.moved`);
    const before = service.stats.requests;
    const moved = await runCli(['docs', 'submit', '--file', `${batch}.moved`], {
      env: { ...env, FACECTL_BASE_URL: service.baseUrl },
    });
    expect(moved.code, moved.stderr).toBe(2);
    expect(moved.stderr).toContain(
      `error: 2 of the lines of ${batch}.moved were submitted, or may have been, by the unfinished batch of ${batch}, a file no longer there (0 recorded as submitted)`,
    );
    expect(service.stats.requests).toBe(before);
    renameSync(`${batch}.moved`, batch);
    const killed = 'did not stop cleanly (it was killed, crashed, or could not write its record)';
    await refusedOnceRewritten('unanswered', batch, lines, env, {
      plain: `an earlier batch of ${batch} ${killed}, before any answer was recorded, and none of the lines it began with is in it now`,
      resume: `nothing to resume: none of the lines the earlier batch of ${batch} began with is in it now`,
    });
  });

  it('another file holding what a stopped batch submitted (a copy) is refused; so is one sharing a line, which --restart sends', async () => {
    const { file: batch, lines } = makeBatch('shared', 6);
    const bad = JSON.stringify({ ...JSON.parse(lines[3] as string), alias: 'no-such-face' });
    writeFileSync(batch, `${[...lines.slice(0, 3), bad, ...lines.slice(4)].join('\n')}\n`);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const stopped = await runCli(['docs', 'submit', '--file', batch, '--concurrency', '1'], { env });
    expect(stopped.code, stopped.stderr).toBe(4);
    const copy = tempFile('copy.ndjson', readFileSync(batch));
    const before = service.stats.requests;
    const copied = await runCli(['docs', 'submit', '--file', copy], { env });
    expect(copied.code, copied.stderr).toBe(2);
    expect(copied.stderr).toContain(
      `error: 3 of the lines of ${copy} were submitted by the unfinished batch of ${batch} (is it a copy?)\n` +
        `a batch is known by its file's path: to go on with it, run \`facectl docs submit --file ${batch} --resume\``,
    );
    expect(service.stats.requests).toBe(before);
    // A file of its own sharing one of the 3 lines: refused too, as sending would make that line twice (a breaker's
    // find: a file half made of such lines ran); --restart sends it.
    const { file: sharing, lines: own } = makeBatch('sharing', 3);
    writeFileSync(sharing, `${[...own, lines[0]].join('\n')}\n`);
    const refused = await runCli(['docs', 'submit', '--file', sharing], { env });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(
      `error: 1 of the lines of ${sharing} was submitted by the unfinished batch of ${batch} (is it a copy?)`,
    );
    expect(service.stats.requests).toBe(before);
    const shared = await runCli(['docs', 'submit', '--file', sharing, '--restart'], { env });
    expect(shared.code, shared.stderr).toBe(0);
    expect(stored(service, 'sharing-')).toHaveLength(3);
    expect(storedLabels(service, 'shared-')).toEqual(['shared-0', 'shared-0', 'shared-1', 'shared-2']);
  });

  it('part of a file whose batch was stopped with requests unanswered (`head -4`) is refused as a copy', async () => {
    // A breaker's find: the lines a batch may have made were counted as its acknowledged lines plus its first
    // lines, both, so a copy of what it made was "most" of twice that count, and ran: 10 documents twice.
    const { file: batch, lines } = makeBatch('part', 8);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 0);
    proxy.holdAfter(2);
    const run = start(['docs', 'submit', '--file', batch, '--concurrency', '2'], env);
    await until(() => proxy.held() >= 2, 'two answers passed, two more held');
    run.child.kill('SIGINT');
    expect((await run.exit).code, run.stderr()).toBe(130);
    proxy.release();
    await until(() => proxy.forwarding() === 0, 'the stopped run’s requests reached the service');
    const direct = { ...env, FACECTL_BASE_URL: service.baseUrl };
    const part = tempFile('part.ndjson', `${lines.slice(0, 4).join('\n')}\n`);
    const before = service.stats.requests;
    const copied = await runCli(['docs', 'submit', '--file', part], { env: direct });
    expect(copied.code, copied.stderr).toBe(2);
    expect(copied.stderr).toContain(
      `error: 4 of the lines of ${part} were submitted, or may have been, by the unfinished batch of ${batch} (is it a copy?) (2 recorded as submitted)`,
    );
    // Fewer lines than it may have made, all of them lines it made (a ring's find: head -50 of a batch that recorded
    // 267 ran, 50 documents twice).
    const few = tempFile('few.ndjson', `${lines.slice(0, 2).join('\n')}\n`);
    const fewer = await runCli(['docs', 'submit', '--file', few], { env: direct });
    expect(fewer.code, fewer.stderr).toBe(2);
    expect(fewer.stderr).toContain(
      `error: 2 of the lines of ${few} were submitted by the unfinished batch of ${batch}`,
    );
    expect(service.stats.requests).toBe(before);
    const resumed = await runCli(['docs', 'submit', '--file', batch, '--resume'], { env: direct });
    expect(resumed.code, resumed.stderr).toBe(0);
    expectEachOnce('part', lines);
  });

  it('a complete line is sent as its own bytes, a line the flags complete as the client serializes it; keys hash the document sent', async () => {
    const lines = [
      // Complete, in its own field order, spacing and escapes: sent byte for byte.
      '{ "label": "sent-0", "content": "caf\\u00e9 \\"q\\" naïve 日本 🎉", "alias": "ada-resume" }',
      '{"alias":"ada-resume","label":"sent-1","content":"with perspective","perspective":"first-person"}',
      // Completed by --label, by --perspective, or with a null perspective: serialized.
      '{"alias":"ada-resume","content":"label from the flag"}',
      '{"label":"sent-3","content":"perspective from the flag","alias":"ada-resume"}',
      '{"alias":"ada-resume","label":"sent-4","content":"null perspective","perspective":null}',
    ];
    const batch = tempFile('sent.ndjson', `\ufeff${lines[0]}\r\n${lines.slice(1).join('\n')}\n`);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    slowProxy(server, service.baseUrl, 0);
    const first = server.requests.length;
    const res = await runCli(['docs', 'submit', '--file', batch, '--json', '--concurrency', '1', '--label', 'sent-2'], {
      env,
    });
    // --label completes line 3 only (the others have labels); --perspective is tried in a second run.
    expect(res.code, res.stderr).toBe(0);
    const sent = server.requests.slice(first);
    expect(sent).toHaveLength(5);
    const bodies = sent.map((r) => r.body);
    // The first line starts with a byte order mark, which JSON does not allow: serialized.
    expect(bodies[0]).toBe('{"alias":"ada-resume","content":"café \\"q\\" naïve 日本 🎉","label":"sent-0"}');
    expect(bodies[1]).toBe(lines[1]);
    expect(bodies[2]).toBe('{"alias":"ada-resume","content":"label from the flag","label":"sent-2"}');
    expect(bodies[3]).toBe(lines[3]);
    expect(bodies[4]).toBe('{"alias":"ada-resume","content":"null perspective","label":"sent-4"}');
    // The key names the batch, the hash of the document sent (its fields, whatever its JSON looks like) and its
    // occurrence (each document is here once).
    for (const request of sent) {
      const document = JSON.parse(request.body) as {
        alias: string;
        label: string;
        perspective?: string;
        content: string;
      };
      const { alias, label, perspective = '', content } = document;
      const fields = `${alias.length}:${alias}${label.length}:${label}${perspective.length}:${perspective}${content}`;
      const hash = createHash('sha256').update(fields).digest('hex').slice(0, 32);
      expect(request.headers['idempotency-key']).toMatch(new RegExp(`^facectl-batch-[\\w-]{16}-${hash}-1$`));
    }

    const again = tempFile('sent-again.ndjson', `${lines[3]}\n${lines[1]}\n`);
    const before = server.requests.length;
    const res2 = await runCli(
      ['docs', 'submit', '--file', again, '--json', '--concurrency', '1', '--perspective', 'first-person'],
      {
        env,
      },
    );
    expect(res2.code, res2.stderr).toBe(0);
    const [third, second] = server.requests.slice(before).map((r) => r.body);
    expect(third).toBe(
      '{"alias":"ada-resume","content":"perspective from the flag","label":"sent-3","perspective":"first-person"}',
    );
    expect(second).toBe(lines[1]);
    expect(stored(service, 'sent-3').map((d) => d.content)).toEqual([
      'perspective from the flag',
      'perspective from the flag',
    ]);
  });

  it('a second invocation on the same file while one runs is refused (exit 5), sending nothing', async () => {
    const { file: batch } = makeBatch('lock', 8);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 200);
    // The first run stops after one answer until it is interrupted, however busy the machine is.
    proxy.holdAfter(1);
    const first = start(['docs', 'submit', '--file', batch, '--concurrency', '1', '--json'], env);
    await until(() => proxy.answered() >= 1, 'a first answer');
    const sentBefore = server.requests.length;
    const second = await runCli(['docs', 'submit', '--file', batch, '--json', '--resume'], { env });
    expect(second.code, second.stderr).toBe(5);
    expect(second.stderr).toContain(`another facectl (pid ${first.child.pid}) is submitting ${batch}`);
    // It is running: said so, with how to stop it, and no "run again in N s" (it keeps its lock fresh).
    expect(JSON.parse(second.stderr).error.hint).toBe(
      `that run is still going: wait for it to finish, or stop it (Ctrl-C where it runs, or kill ${first.child.pid}); then run this command again`,
    );
    first.child.kill('SIGINT');
    expect((await first.exit).code).toBe(130);
    // Only the first invocation's requests reached the server.
    expect(server.requests.length - sentBefore).toBeLessThanOrEqual(2);
  });

  it('--restart sends every line again; --resume without a record is refused (exit 2), sending nothing', async () => {
    const { file: batch } = makeBatch('restart', 4);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const stateDir = join(env.FACECTL_CONFIG_DIR, 'state');
    const before0 = service.stats.requests;
    // A breaker's --resume of a file with no record sent every line (a record pruned: every line twice).
    for (const json of [false, true]) {
      const nothing = await runCli(['docs', 'submit', '--file', batch, '--resume', ...(json ? ['--json'] : [])], {
        env,
      });
      expect(nothing.code, nothing.stderr).toBe(2);
      expect(nothing.stdout).toBe('');
      const message = `nothing to resume: no batch of ${batch} is recorded in ${stateDir}`;
      const hint =
        'run without --resume to send every line as a new batch (its documents are created again if an earlier ' +
        'run made them), or set FACECTL_STATE_DIR to the directory the batch was recorded in';
      if (json) expect(JSON.parse(nothing.stderr).error).toMatchObject({ code: 'nothing_to_resume', message, hint });
      else expect(nothing.stderr).toBe(`error: ${message}\n${hint}\n`);
    }
    // Standard input too. A refusal leaves no trace: the state directory was made, batches/ in it (a ring's find).
    const piped = await runCli(['docs', 'submit', '--resume', '--format', 'ndjson', '-'], {
      env,
      stdin: readFileSync(batch),
    });
    expect(piped.code, piped.stderr).toBe(2);
    expect(piped.stdout).toBe('');
    expect(piped.stderr).toContain('error: nothing to resume: no batch of standard input read in ');
    expect(existsSync(stateDir)).toBe(false);
    expect(service.stats.requests).toBe(before0);
    expect(stored(service, 'restart-')).toHaveLength(0);
    expect(batchRecords(env.FACECTL_CONFIG_DIR)).toEqual([]);
    // Without --resume, a new batch: every line.
    const first = await runCli(['docs', 'submit', '--file', batch], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(stored(service, 'restart-')).toHaveLength(4);
    // A finished batch leaves no record: a plain rerun submits again, as any command would.
    const again = await runCli(['docs', 'submit', '--file', batch], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(stored(service, 'restart-')).toHaveLength(8);

    // An unfinished record (stopped at line 3, whose face does not exist), dropped by --restart, which says so:
    // every line is sent (new keys: new documents).
    const good = readFileSync(batch, 'utf8');
    const [one, two, three, four] = good.trim().split('\n') as [string, string, string, string];
    const bad = JSON.stringify({ ...JSON.parse(three), alias: 'no-such-face' });
    writeFileSync(batch, `${[one, two, bad, four].join('\n')}\n`);
    const stopped = await runCli(['docs', 'submit', '--file', batch, '--concurrency', '1'], { env });
    expect(stopped.code, stopped.stderr).toBe(4);
    writeFileSync(batch, good);
    const afterStop = stored(service, 'restart-').length;
    const before = service.stats.requests;
    const restart = await runCli(['docs', 'submit', '--file', batch, '--restart'], { env });
    expect(restart.code, restart.stderr).toBe(0);
    expect(restart.stderr).toContain(
      "warning: restarting: the unfinished batch's record of 2 submitted lines is dropped; every line is sent again, and those already submitted are created again",
    );
    expect(service.stats.requests - before).toBe(4);
    expect(stored(service, 'restart-')).toHaveLength(afterStop + 4);
    expect(journalFiles(env.FACECTL_CONFIG_DIR)).toEqual([]);

    // Stopped again, then every document edited (a ring's find: the warning said the lines already submitted are
    // created again, of lines none of which was sent as they are now).
    writeFileSync(batch, `${[one, two, bad, four].join('\n')}\n`);
    expect((await runCli(['docs', 'submit', '--file', batch, '--concurrency', '1'], { env })).code).toBe(4);
    const edited = [one, two, three, four].map((line) => {
      const { alias, label, content } = JSON.parse(line) as Record<string, unknown>;
      return JSON.stringify({ alias, label, content: `${String(content)} (edited)` });
    });
    writeFileSync(batch, `${edited.join('\n')}\n`);
    const other = await runCli(['docs', 'submit', '--file', batch, '--restart'], { env });
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).toContain(
      `warning: restarting: the unfinished batch's record of 2 submitted lines is dropped; every line is sent again: none of them is in ${batch} now (edited since, or completed by other flags: other documents)`,
    );
    // One of the two back as it was sent.
    writeFileSync(batch, `${[one, two, bad, four].join('\n')}\n`);
    expect((await runCli(['docs', 'submit', '--file', batch, '--concurrency', '1'], { env })).code).toBe(4);
    writeFileSync(batch, `${[one, ...edited.slice(1)].join('\n')}\n`);
    const partly = await runCli(['docs', 'submit', '--file', batch, '--restart'], { env });
    expect(partly.code, partly.stderr).toBe(0);
    expect(partly.stderr).toContain(
      `every line is sent again: 1 of them, still in ${batch}, is created again (the others were edited or removed since)`,
    );
  });

  it('--resume of a finished batch whose record was pruned (21 batches since) is refused: nothing stored twice', async () => {
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const { file: first } = makeBatch('pruned', 3);
    expect((await runCli(['docs', 'submit', '--file', first], { env })).code).toBe(0);
    // The state directory keeps the 20 most recent finished batches: 20 more and the first one's is gone.
    for (let i = 0; i < 20; i++) {
      const { file } = makeBatch(`later${i}`, 1);
      const later = await runCli(['docs', 'submit', '--file', file], { env });
      expect(later.code, later.stderr).toBe(0);
    }
    expect(batchRecords(env.FACECTL_CONFIG_DIR)).toHaveLength(20);
    const before = service.stats.requests;
    const resumed = await runCli(['docs', 'submit', '--file', first, '--resume'], { env });
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(resumed.stderr).toContain(`error: nothing to resume: no batch of ${first} is recorded in `);
    expect(service.stats.requests).toBe(before);
    expect(storedLabels(service, 'pruned-')).toEqual(['pruned-0', 'pruned-1', 'pruned-2']);
    expect(batchRecords(env.FACECTL_CONFIG_DIR)).toHaveLength(20);
  }, 60_000);

  it('--resume or a plain run of a file moved after its batch stopped: refused naming that file; moved back, it resumes', async () => {
    const { file: batch, lines } = makeBatch('moved', 4);
    const { file: other } = makeBatch('elsewhere', 4);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    // Two stopped batches whose files then went elsewhere.
    await stoppedAfterOneAnswer(other, env);
    renameSync(other, `${other}.elsewhere`);
    await stoppedAfterOneAnswer(batch, env);
    const moved = `${batch}.moved`;
    renameSync(batch, moved);
    const before = service.stats.requests;
    // A breaker's rename: the batch is known by its path, so --resume sent every line again.
    const refused = await runCli(['docs', 'submit', '--file', moved, '--resume'], { env });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(
      new RegExp(
        `error: nothing to resume: no unfinished batch of ${moved} was recorded, but [1-4] of its lines (?:was|were) ` +
          `submitted(, or may have been,)? by the unfinished batch of ${batch}, a file no longer there`,
      ),
    );
    expect(refused.stderr).toContain('move it back and run --resume (its submitted lines are not sent twice)');
    // --restart is offered with what it costs: the lines already submitted made a second time.
    const count = /but (\d) of its lines (?:was|were)/.exec(refused.stderr)?.[1];
    // Stopped with its second request unanswered or not (the SIGINT races it): that line may have been made too.
    const said = (file: string, where: string) =>
      new RegExp(
        `error: ${count} of the lines of ${escape(file)} (?:was|were) submitted(, or may have been,)? by the unfinished batch ` +
          `of ${escape(batch)}${escape(where)}( \\(\\d+ recorded as submitted\\))?\n`,
      );
    expect(refused.stderr).toContain(
      `--restart sends every line of ${moved} anyway: those already submitted are created again, as duplicates`,
    );
    // A plain run of it sent them all again as well (a breaker's find): refused the same way.
    const plain = await runCli(['docs', 'submit', '--file', moved], { env });
    expect(plain.code, plain.stderr).toBe(2);
    expect(plain.stderr).toMatch(said(moved, ', a file no longer there'));
    expect(service.stats.requests).toBe(before);
    // A file none of those batches holds a line of: nothing to resume, refused, nothing sent.
    const { file: unrelated } = makeBatch('unrelated', 2);
    const fresh = await runCli(['docs', 'submit', '--file', unrelated, '--resume'], { env });
    expect(fresh.code, fresh.stderr).toBe(2);
    expect(fresh.stderr).toContain(`error: nothing to resume: no batch of ${unrelated} is recorded in `);
    expect(stored(service, 'unrelated-')).toHaveLength(0);
    renameSync(moved, batch);
    // A copy of it is refused too (a breaker's find), pointing at the batch to go on with.
    const copy = tempFile('copy.ndjson', readFileSync(batch));
    const copied = await runCli(['docs', 'submit', '--file', copy], { env });
    expect(copied.code, copied.stderr).toBe(2);
    expect(copied.stderr).toMatch(said(copy, ' (is it a copy?)'));
    expect(copied.stderr).toContain(
      `a batch is known by its file's path: to go on with it, run \`facectl docs submit --file ${batch} --resume\` with the flags it was run with (its submitted lines`,
    );
    expect(service.stats.requests).toBe(before);

    const resumed = await runCli(['docs', 'submit', '--file', batch, '--resume'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expectEachOnce('moved', lines);
  });

  it('--resume and --restart are refused where they cannot apply (exit 2, nothing sent)', async () => {
    const text = tempFile('note.txt', 'just text\n');
    const before = service.stats.requests;
    const env = { FACECTL_API_KEY: service.key('pro'), FACECTL_BASE_URL: service.baseUrl };
    const cases: [string[], RegExp][] = [
      [['--resume', '--restart', '--file', text], /give only one of --resume and --restart/],
      [
        ['--resume', '--content', 'x', '--alias', 'ada-resume', '--label', 'l'],
        /--resume applies to a batch .* not to --content/,
      ],
      [
        ['--restart', '--file', text, '--alias', 'ada-resume', '--label', 'l'],
        /--restart applies to a batch \(NDJSON\), but .* was read as text/,
      ],
    ];
    for (const [args, message] of cases) {
      const res = await runCli(['docs', 'submit', ...args], { env });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toMatch(message);
    }
    expect(service.stats.requests).toBe(before);
  });
});

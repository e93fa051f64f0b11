import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useFaultServer } from '../helpers/hooks.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { createFace } from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';
import { BIN, ROOT, runCli } from '../helpers/run-cli.js';
import { slowProxy } from '../helpers/slow-proxy.js';
import { watchChild } from '../helpers/watch-child.js';
import { batchEnv, batchFile, resultLines, start, stored, tempFile, until } from './support.js';

// Issue 22, item 2: --resume matches what was acknowledged by content, wherever the line now stands
// (a line inserted, removed, lines reordered, the same line twice), and batches from standard input
// in one directory no longer block each other unless they are the same input.

const server = useFaultServer();
const service = useService({}, { faces: ['ada-moved'] });
beforeAll(() => ensureBuilt(), 120_000);

const line = (label: string, content = `${label}: "naïve" ✓`) => JSON.stringify({ alias: 'ada-moved', label, content });
const write = (file: string, lines: string[]) => writeFileSync(file, `${lines.join('\n')}\n`);
const labelOf = (text: string) => (JSON.parse(text) as { label: string }).label;

/** A finished 3-line batch (a, b, c) of its own: its file, environment and the document id of each label. */
async function finished(prefix: string, lines = ['a', 'b', 'c'].map((l) => line(`${prefix}${l}`))) {
  const file = tempFile('moved.ndjson', `${lines.join('\n')}\n`);
  const env = batchEnv(service.key('pro'), service.baseUrl);
  const first = await runCli(['docs', 'submit', '--file', file, '--json'], { env });
  expect(first.code, first.stderr).toBe(0);
  const ids = new Map(resultLines(first.stdout).map((r) => [labelOf(lines[r.line - 1] as string), r.document_id]));
  return { file, env, ids };
}

/** `--resume --json` of the file: its results, its notices, and how many requests reached the service. */
async function resume(file: string, env: Record<string, string>) {
  const before = service.stats.requests;
  const res = await runCli(['docs', 'submit', '--file', file, '--json', '--resume'], { env });
  expect(res.code, res.stderr).toBe(0);
  const notices = res.stderr
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { notice: string }).notice);
  return { results: resultLines(res.stdout), notices, sent: service.stats.requests - before };
}

describe('--resume matches acknowledged lines by content', () => {
  it('a finished batch, a line inserted at the top: 1 sent, 3 reported resumed with their ids, 4 documents', async () => {
    const { file, env, ids } = await finished('top-');
    const lines = [line('top-new'), line('top-a'), line('top-b'), line('top-c')];
    write(file, lines);
    const { results, notices, sent } = await resume(file, env);
    expect(sent).toBe(1);
    expect(results.map((r) => r.line).sort()).toEqual([1, 2, 3, 4]);
    for (const r of results) {
      const label = labelOf(lines[r.line - 1] as string);
      if (label === 'top-new') expect(r.resumed).toBeUndefined();
      else expect(r).toMatchObject({ ok: true, resumed: true, document_id: ids.get(label) });
    }
    expect(notices).toContain('resuming: 3 already submitted (3 moved), 1 added, 0 removed');
    expect(notices.join('\n')).toContain('Submitted 4 of 4 documents (3 of them by an earlier run, not sent again)');
    expect(
      stored(service, 'top-')
        .map((d) => d.label)
        .sort(),
    ).toEqual(['top-a', 'top-b', 'top-c', 'top-new']);
  });

  it('a line removed: nothing sent, the others reported resumed with their ids', async () => {
    const { file, env, ids } = await finished('gone-');
    write(file, [line('gone-a'), line('gone-c')]);
    const { results, notices, sent } = await resume(file, env);
    expect(sent).toBe(0);
    expect(results).toEqual([
      { line: 1, ok: true, document_id: ids.get('gone-a'), token_count: expect.any(Number), resumed: true },
      { line: 2, ok: true, document_id: ids.get('gone-c'), token_count: expect.any(Number), resumed: true },
    ]);
    expect(notices).toContain('resuming: 2 already submitted (1 moved), 0 added, 1 removed');
    expect(stored(service, 'gone-')).toHaveLength(3);
  });

  it('lines reordered: nothing sent, each reported with its own document id', async () => {
    const { file, env, ids } = await finished('order-');
    const lines = [line('order-c'), line('order-a'), line('order-b')];
    write(file, lines);
    const { results, notices, sent } = await resume(file, env);
    expect(sent).toBe(0);
    expect(results).toHaveLength(3);
    for (const r of results) expect(r.document_id).toBe(ids.get(labelOf(lines[r.line - 1] as string)));
    expect(notices).toContain('resuming: 3 already submitted (3 moved), 0 added, 0 removed');
    expect(stored(service, 'order-')).toHaveLength(3);
  });

  it('the same line twice: each copy matches one acknowledged document, wherever they stand now', async () => {
    const same = line('twice-x', 'the very same document');
    const { file, env, ids } = await finished('twice-', [same, line('twice-y'), same]);
    const firstIds = stored(service, 'twice-x').map((d) => d.id);
    expect(firstIds).toHaveLength(2);
    expect(ids.get('twice-y')).toBeDefined();
    write(file, [line('twice-new'), same, same, line('twice-y')]);
    const { results, notices, sent } = await resume(file, env);
    expect(sent).toBe(1);
    const copies = results.filter((r) => r.line === 2 || r.line === 3);
    expect(copies.every((r) => r.resumed === true)).toBe(true);
    expect(copies.map((r) => r.document_id).sort()).toEqual([...firstIds].sort());
    expect(notices).toContain('resuming: 3 already submitted (2 moved), 1 added, 0 removed');
    expect(stored(service, 'twice-')).toHaveLength(4);
  });

  it('interrupted with a line applied but its answer lost, a line inserted above it, --resume: not created twice', async () => {
    const { file, lines } = batchFile('ada-moved', 'lost-', 6);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 0);
    // Two answers pass; the third line is applied by the service, its answer held until the run stops.
    proxy.holdAfter(2);
    const run = start(['docs', 'submit', '--file', file, '--concurrency', '1', '--json'], env);
    await until(() => proxy.answered() >= 2 && proxy.held() >= 1, 'two answers and the third line applied');
    run.child.kill('SIGINT');
    expect((await run.exit).code, run.stderr()).toBe(130);
    proxy.release();
    await until(() => proxy.forwarding() === 0, 'the stopped run’s requests reached the service');
    expect(stored(service, 'lost-2')).toHaveLength(1);

    write(file, [line('lost-new'), ...lines]);
    const direct = { ...env, FACECTL_BASE_URL: service.baseUrl };
    // A plain run is still refused: the input holds lines that batch acknowledged.
    const plain = await runCli(['docs', 'submit', '--file', file, '--json'], { env: direct });
    expect(plain.code, plain.stderr).toBe(2);
    // Line 3 was applied, its answer lost: not "stopped after 2", which would count a --restart's duplicates short.
    expect(plain.stderr).toContain('so it may have submitted lines it has no record of (2 recorded)');

    const { results, notices, sent } = await resume(file, direct);
    // The inserted line and lines 3 to 6 are sent; line 3's request is answered from its idempotency record.
    expect(sent).toBe(5);
    expect(notices).toContain('resuming: 2 already submitted (2 moved), 5 not yet submitted, 0 removed');
    expect(results.filter((r) => r.resumed === true)).toHaveLength(2);
    expect(results).toHaveLength(7);
    const labels = stored(service, 'lost-')
      .map((d) => d.label)
      .sort();
    expect(labels).toEqual(['lost-0', 'lost-1', 'lost-2', 'lost-3', 'lost-4', 'lost-5', 'lost-new']);
  });
});

describe('--resume with another key (a breaker: lines of another account were taken as submitted, exit 0)', () => {
  /** A batch of six whose fourth line names no face: with --concurrency 1 it stops after three, recorded. */
  async function stoppedAfterThree(prefix: string, key: string) {
    const lines = [0, 1, 2, 3, 4, 5].map((i) => line(`${prefix}${i}`));
    lines[3] = JSON.stringify({ alias: 'no-such-face', label: `${prefix}3`, content: 'x' });
    const file = tempFile(`${prefix}.ndjson`, `${lines.join('\n')}\n`);
    const env = batchEnv(key, service.baseUrl);
    const first = await runCli(['docs', 'submit', '--file', file, '--concurrency', '1', '--json'], { env });
    expect(first.code, first.stderr).toBe(4);
    lines[3] = line(`${prefix}3`);
    write(file, lines);
    return { file, env };
  }
  const labelsOf = (plan: 'pro' | 'standard', prefix: string) =>
    [...service.store.values('documents')]
      .filter((d) => d.user_id === service.userId(plan) && d.label.startsWith(prefix))
      .map((d) => d.label)
      .sort();

  it("another account's key: every line is sent for that account, with a warning; nothing more for the first", async () => {
    await createFace(service, service.key('standard'), 'ada-moved');
    const { file, env } = await stoppedAfterThree('acct-', service.key('pro'));
    expect(labelsOf('pro', 'acct-')).toEqual(['acct-0', 'acct-1', 'acct-2']);
    const other = { ...env, FACECTL_API_KEY: service.key('standard') };
    const plain = await runCli(['docs', 'submit', '--file', file, '--json'], { env: other });
    expect(plain.code, plain.stderr).toBe(2);
    expect(plain.stderr).toContain(`(sent with key ${service.key('pro').slice(0, 12)}…) stopped after 3`);
    const resumed = await runCli(['docs', 'submit', '--file', file, '--json', '--resume'], { env: other });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('every line is sent again');
    expect(resumed.stderr).not.toContain('Nothing to resume');
    expect(resultLines(resumed.stdout).filter((r) => r.ok)).toHaveLength(6);
    expect(labelsOf('standard', 'acct-')).toEqual(['acct-0', 'acct-1', 'acct-2', 'acct-3', 'acct-4', 'acct-5']);
    expect(labelsOf('pro', 'acct-')).toEqual(['acct-0', 'acct-1', 'acct-2']);
  });

  it('a first run refused for its key, then --resume with a good one: every line sent, no warning of another account', async () => {
    const lines = [0, 1, 2].map((i) => line(`refused-${i}`));
    const file = tempFile('refused.ndjson', `${lines.join('\n')}\n`);
    const refused = batchEnv(`fcs_nokey_${'0'.repeat(32)}`, service.baseUrl);
    const first = await runCli(['docs', 'submit', '--file', file, '--json'], { env: refused });
    expect(first.code, first.stderr).toBe(3);
    const env = { ...refused, FACECTL_API_KEY: service.key('pro') };
    const resumed = await runCli(['docs', 'submit', '--file', file, '--json', '--resume'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    // A breaker saw "the earlier runs … sent with key fcs_nokey_…, perhaps of another account", of a run that made nothing.
    expect(resumed.stderr).not.toContain('another account');
    expect(resultLines(resumed.stdout).filter((r) => r.ok)).toHaveLength(3);
    expect(labelsOf('pro', 'refused-')).toEqual(['refused-0', 'refused-1', 'refused-2']);
  });

  it('a new key of the same account: the lines already made are answered from their idempotency records, none twice', async () => {
    const { file, env } = await stoppedAfterThree('rot-', service.key('pro'));
    const made = await runCli(['keys', 'create', '--name', 'rotated', '--json'], { env });
    expect(made.code, made.stderr).toBe(0);
    const rotated = { ...env, FACECTL_API_KEY: (JSON.parse(made.stdout) as { key: string }).key };
    const resumed = await runCli(['docs', 'submit', '--file', file, '--json', '--resume'], { env: rotated });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(labelsOf('pro', 'rot-')).toEqual(['rot-0', 'rot-1', 'rot-2', 'rot-3', 'rot-4', 'rot-5']);
  });
});

describe('batches from standard input in one directory', () => {
  it('an interrupted batch does not block an unrelated one; it is still resumed afterwards', async () => {
    const big = batchFile('ada-moved', 'pipe-big-', 30);
    const small = batchFile('ada-moved', 'pipe-small-', 3);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 0);
    proxy.holdAfter(3);
    // `cat big.ndjson | facectl docs submit - --json | head -1`: its reader goes away after a line.
    const run = start(['docs', 'submit', '--json', '-'], env, readFileSync(big.file, 'utf8'));
    await until(() => run.stdout().includes('\n'), 'the first result line');
    run.child.stdout.destroy();
    proxy.holdAfter(4);
    expect((await run.exit).code, run.stderr()).toBe(141);
    proxy.release();
    await until(() => proxy.forwarding() === 0, 'the stopped run’s requests reached the service');
    const done = stored(service, 'pipe-big-').length;
    expect(done).toBeGreaterThanOrEqual(3);

    const direct = { ...env, FACECTL_BASE_URL: service.baseUrl };
    const unrelated = await runCli(['docs', 'submit', '-'], { env: direct, stdin: readFileSync(small.file, 'utf8') });
    expect(unrelated.code, unrelated.stderr).toBe(0);
    expect(stored(service, 'pipe-small-')).toHaveLength(3);

    // The same big input again without --resume is still refused; with it, only the rest is sent.
    const plain = await runCli(['docs', 'submit', '-'], { env: direct, stdin: readFileSync(big.file, 'utf8') });
    expect(plain.code, plain.stderr).toBe(2);
    // Said with how much of its first lines the two inputs share (a newcomer's find: another input sharing a few
    // of them was refused as "an earlier batch of standard input", nothing telling it was not the same).
    expect(plain.stderr).toMatch(
      /an earlier batch of standard input \(sharing (\d+) of this input's first \1 lines\) was stopped with \d+ requests? unanswered/,
    );
    expect(plain.stderr).toMatch(
      /those of the \d+ recorded as submitted that this input holds, and any it has no record of, are created again/,
    );
    // The same documents in another form (other spacing, as another tool writes JSON) are the same input (a
    // breaker's find: they were another input by their bytes, and every line was made again).
    const spaced = readFileSync(big.file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.stringify(JSON.parse(l), null, 1).replace(/\n/g, ''));
    const before = service.stats.requests;
    const reformed = await runCli(['docs', 'submit', '-'], { env: direct, stdin: `${spaced.join('\n')}\n` });
    expect(reformed.code, reformed.stderr).toBe(2);
    expect(reformed.stderr).toMatch(
      /an earlier batch of standard input \(sharing (\d+) of this input's first \1 lines\)/,
    );
    expect(service.stats.requests).toBe(before);
    const resumed = await runCli(['docs', 'submit', '--json', '--resume', '-'], {
      env: direct,
      stdin: readFileSync(big.file, 'utf8'),
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(service.stats.requests - before).toBeLessThanOrEqual(30 - 3);
    expect(resultLines(resumed.stdout)).toHaveLength(30);
    const labels = stored(service, 'pipe-big-').map((d) => d.label);
    expect(new Set(labels).size, 'a line was created twice').toBe(labels.length);
    expect(labels).toHaveLength(30);
    expect(stored(service, 'pipe-small-')).toHaveLength(3);
  });

  it('a finished batch, a line inserted at the top of the same standard input: --resume sends it alone', async () => {
    const lines = ['a', 'b', 'c'].map((l) => line(`stdin-top-${l}`));
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const first = await runCli(['docs', 'submit', '--json', '-'], { env, stdin: `${lines.join('\n')}\n` });
    expect(first.code, first.stderr).toBe(0);
    const idOnLine = new Map(resultLines(first.stdout).map((r) => [r.line, r.document_id]));
    const before = service.stats.requests;
    const again = await runCli(['docs', 'submit', '--json', '--resume', '-'], {
      env,
      stdin: `${[line('stdin-top-new'), ...lines].join('\n')}\n`,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(service.stats.requests - before).toBe(1);
    const results = resultLines(again.stdout).sort((x, y) => x.line - y.line);
    expect(results.map((r) => r.resumed)).toEqual([undefined, true, true, true]);
    // Each moved down one line, with the document it had.
    expect(results.slice(1).map((r) => r.document_id)).toEqual([1, 2, 3].map((n) => idOnLine.get(n)));
    expect(again.stderr).toContain('{"notice":"resumed: 3 already submitted (3 moved), 1 added, 0 removed"}');
    expect(stored(service, 'stdin-top-')).toHaveLength(4);
  });

  it('input that comes a line now and then is not waited for: its first line is sent before the rest is written', async () => {
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const child = spawn(process.execPath, [BIN, 'docs', 'submit', '--format', 'ndjson', '-'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        ...env,
        FACECTL_STATE_DIR: join(env.FACECTL_CONFIG_DIR, 'state'),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const run = watchChild(child);
    child.stdin.write(`${line('slow-0')}\n`);
    await until(() => stored(service, 'slow-').length === 1, 'the first line sent while the input is still open');
    child.stdin.end(`${line('slow-1')}\n`);
    expect((await run.exit).code, run.stderr()).toBe(0);
    expect(
      stored(service, 'slow-')
        .map((d) => d.label)
        .sort(),
    ).toEqual(['slow-0', 'slow-1']);
  });

  it('two different inputs at once both run; the same input twice at once: the second exits 5', async () => {
    const one = batchFile('ada-moved', 'once-one-', 6);
    const two = batchFile('ada-moved', 'once-two-', 3);
    const env = batchEnv(service.key('pro'), server.baseUrl);
    const proxy = slowProxy(server, service.baseUrl, 0);
    proxy.holdAfter(1);
    const first = start(['docs', 'submit', '--concurrency', '1', '-'], env, readFileSync(one.file, 'utf8'));
    await until(() => proxy.answered() >= 1, 'a first answer');
    const direct = { ...env, FACECTL_BASE_URL: service.baseUrl };
    const other = await runCli(['docs', 'submit', '-'], { env: direct, stdin: readFileSync(two.file, 'utf8') });
    expect(other.code, other.stderr).toBe(0);
    expect(stored(service, 'once-two-')).toHaveLength(3);
    const same = await runCli(['docs', 'submit', '-'], { env: direct, stdin: readFileSync(one.file, 'utf8') });
    expect(same.code, same.stderr).toBe(5);
    expect(same.stderr).toContain(`another facectl (pid ${first.child.pid}) is submitting standard input`);
    // Its hint is --resume: a plain run once the first is done would send all six again (a breaker's find).
    expect(same.stderr).toContain(
      '; then run this command again with --resume, which sends only what that run did not',
    );
    proxy.release();
    expect((await first.exit).code, first.stderr()).toBe(0);
    const again = await runCli(['docs', 'submit', '-', '--resume'], {
      env: direct,
      stdin: readFileSync(one.file, 'utf8'),
    });
    expect(again.code, again.stderr).toBe(0);
    const labels = stored(service, 'once-one-').map((d) => d.label);
    expect(labels.sort()).toEqual(Array.from({ length: 6 }, (_, i) => `once-one-${i}`));
  });
});

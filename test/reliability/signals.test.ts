import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { constants } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { json } from '../helpers/fault-server.js';
import { useFaultServer, useServe } from '../helpers/hooks.js';
import { BIN, ROOT, runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp.js';
import { watchChild } from '../helpers/watch-child.js';
import { approveConsent } from '../helpers/command-harness.js';
import { createFace, startTestService } from '../helpers/service.js';
import { slowProxy } from '../helpers/slow-proxy.js';
import { batchEnv, batchFile, journalFiles, KEY, resultLines, start, stored, until } from './support.js';

/** A batch's summary of 20 lines: submitted, sent without an answer and not sent add up to the total. */
const countsAddUp = (summary: string) => {
  const counts = /^Submitted (\d+) of 20 documents(?:, (\d+) sent without an answer)?(?:, (\d+) not sent)?\. /.exec(
    summary,
  );
  return counts ? counts.slice(1).reduce((sum, n) => sum + Number(n ?? 0), 0) : undefined;
};

/** Whether the process catches `signal` (Linux: SigCgt in /proc/PID/status); false once it is gone. */
const catches = (pid: number, signal: NodeJS.Signals) => {
  try {
    const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '0';
    return ((BigInt(`0x${mask}`) >> BigInt(constants.signals[signal] - 1)) & 1n) === 1n;
  } catch {
    return false;
  }
};

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Cases 31-33 of docs/reliability.md: Ctrl-C (SIGINT to the bin) and a closed stdout.

const server = useFaultServer();
const serve = useServe();

describe('signals', () => {
  it('case 31: Ctrl-C during a batch submit -> stops new requests, journal of what finished, "N of M"; --resume sends only the rest and creates nothing twice', async () => {
    const service = await startTestService();
    try {
      const key = service.key('pro');
      await createFace(service, key, 'ada-resume');
      // Each answer is held back 300 ms after the service acted: Ctrl-C lands with requests in flight
      // that the service applied but the CLI never saw answered.
      const proxy = slowProxy(server, service.baseUrl, 300);
      proxy.holdAfter(4);
      const { file: batch, lines } = batchFile('ada-resume', 'case31-', 20, (i) => `document ${i} "quoted" ✓`);
      const env = batchEnv(key, server.baseUrl);
      const run = start(['docs', 'submit', '--file', batch, '--concurrency', '2', '--json'], env);
      const deadline = Date.now() + 15_000;
      // Four answered, and at least one more applied by the service whose answer is still held back.
      const ready = () => proxy.answered() >= 4 && stored(service, 'case31-').length > proxy.answered();
      while (!ready() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      run.child.kill('SIGINT');
      const { code } = await run.exit;
      expect(code, run.stderr()).toBe(130);
      const done = Number(/interrupted: (\d+) of 20 documents were submitted/.exec(run.stderr())?.[1]);
      expect(done).toBeGreaterThanOrEqual(4);
      expect(done).toBeLessThan(20);
      expect(run.stderr()).toContain(`facectl docs submit --file ${batch} --resume`);
      // Results printed for the finished lines only, and no request started after the interrupt.
      const printed = run
        .stdout()
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      expect(printed).toHaveLength(done);
      const sentAtExit = server.requests.length;
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(server.requests.length).toBe(sentAtExit);
      // The journal: mode 0600, a header, each line's key before its request and one record per finished line.
      const journals = journalFiles(env.FACECTL_CONFIG_DIR);
      expect(journals).toHaveLength(1);
      expect(statSync(journals[0] as string).mode & 0o777).toBe(0o600);
      const records = readFileSync(journals[0] as string, 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => JSON.parse(l));
      // Its last line says it stopped, with the requests it left unanswered: a kill would leave none.
      const stop = records.pop();
      expect(stop).toEqual({ stopped: true, unanswered: expect.any(Number) });
      const sent = new Set(records.filter((r) => 'sent' in r).map((r) => r.sent));
      const acknowledged = records.filter((r) => !('sent' in r));
      // Every line it sent: those answered and those left unanswered.
      expect(sent.size).toBe(done + stop.unanswered);
      expect(acknowledged.filter((r) => !sent.has(r.n === 1 ? r.hash : `${r.hash}.${r.n}`))).toEqual([]);
      expect(acknowledged.map((r) => r.line).sort((x, y) => x - y)).toEqual(
        printed.map((r) => r.line).sort((x, y) => x - y),
      );
      const storedAfterStop = stored(service, 'case31-');
      // Applied but never answered: the lines that --resume must not create a second time.
      expect(storedAfterStop.length).toBeGreaterThan(done);
      // They are counted as sent without an answer, not as "not sent": the summary's counts add up to 20.
      const counts = /Submitted (\d+) of 20 documents, (\d+) sent without an answer, (\d+) not sent\./.exec(
        run.stderr(),
      );
      const [submitted, unanswered, notSent] = (counts ?? []).slice(1).map(Number);
      expect(submitted, run.stderr()).toBe(done);
      expect(unanswered).toBeGreaterThanOrEqual(storedAfterStop.length - done);
      expect(unanswered).toBeLessThanOrEqual(2);
      expect(done + (unanswered as number) + (notSent as number)).toBe(20);
      expect(run.stderr()).toContain(
        `interrupted: ${done} of 20 documents were submitted, ${unanswered} sent without an answer (${unanswered === 1 ? 'it' : 'they'} may have been created; --resume does not create ${unanswered === 1 ? 'it' : 'them'} twice)`,
      );

      // A plain rerun is refused, sending nothing: it would submit the finished lines a second time.
      const before = service.stats.requests;
      const plain = await runCli(['docs', 'submit', '--file', batch, '--json'], {
        env: { ...env, FACECTL_BASE_URL: service.baseUrl },
      });
      expect(plain.code, plain.stderr).toBe(2);
      expect(plain.stderr).toMatch(
        new RegExp(
          `an earlier batch of ${escape(batch)} was stopped with ${unanswered} ${unanswered === 1 ? 'request' : 'requests'} unanswered, so it may have submitted lines it has no record of \\(${done} recorded\\)`,
        ),
      );
      // What --restart would cost is said: the documents already submitted made a second time.
      expect(plain.stderr).toContain(
        `pass --resume to send only the lines not yet submitted; --restart sends every line again: the ${done} recorded as submitted, and any it has no record of, are created again, as duplicates (the record is `,
      );
      expect(service.stats.requests).toBe(before);

      // --resume: sends only what is left; the lines in flight at Ctrl-C are answered by the service's
      // idempotency record, not created again.
      const resumed = await runCli(['docs', 'submit', '--file', batch, '--json', '--resume'], {
        env: { ...env, FACECTL_BASE_URL: service.baseUrl },
      });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(service.stats.requests - before).toBe(20 - done);
      const results = resumed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(results.map((r) => r.line).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(results.filter((r) => r.resumed === true)).toHaveLength(done);
      expect(resumed.stderr).toContain(
        `Submitted 20 of 20 documents (${done} of them by an earlier run, not sent again)`,
      );
      const final = stored(service, 'case31-');
      expect(final.map((d) => d.label).sort()).toEqual(lines.map((l) => JSON.parse(l).label).sort());
      expect(final.map((d) => d.content).sort()).toEqual(lines.map((l) => JSON.parse(l).content).sort());
      // Every printed document id is the stored one of its line; the finished batch leaves no journal.
      for (const r of results) expect(final.find((d) => d.id === r.document_id)?.label).toBe(`case31-${r.line - 1}`);
      expect(journalFiles(env.FACECTL_CONFIG_DIR)).toEqual([]);
    } finally {
      await service.close();
    }
  });

  it('Ctrl-C in a shell loop of batches stops the loop: facectl ends by SIGINT itself, so bash does not start the next batch', async () => {
    const service = await startTestService();
    try {
      const key = service.key('pro');
      await createFace(service, key, 'ada-loop');
      // Answers held back after the second: the first batch is still running when Ctrl-C comes.
      const proxy = slowProxy(server, service.baseUrl, 50);
      proxy.holdAfter(2);
      const first = batchFile('ada-loop', 'loopA-', 20).file;
      const second = batchFile('ada-loop', 'loopB-', 20).file;
      const env = batchEnv(key, server.baseUrl);
      // A terminal's Ctrl-C: SIGINT to the whole foreground process group, bash and facectl alike.
      const script = `for f in ${first} ${second}; do "${process.execPath}" "${BIN}" docs submit --file "$f" >/dev/null; echo "status $?" >&2; done`;
      const loop = spawn('bash', ['-c', script], {
        cwd: ROOT,
        detached: true,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/tmp',
          NO_COLOR: '1',
          FACECTL_STATE_DIR: join(env.FACECTL_CONFIG_DIR, 'state'),
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const watched = watchChild(loop);
      await until(() => proxy.answered() >= 2, 'the first batch to get two answers');
      process.kill(-(loop.pid as number), 'SIGINT');
      const exit = await watched.exit;
      proxy.release();
      expect(exit, watched.stderr()).toEqual({ code: 130, signal: 'SIGINT' });
      expect(watched.stderr()).toMatch(/interrupted: \d+ of 20 documents were submitted/);
      // The loop's next command never ran: no status line, and the service has nothing of the second file.
      expect(watched.stderr()).not.toContain('status');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(stored(service, 'loopB-')).toEqual([]);
      expect(stored(service, 'loopA-').length).toBeGreaterThanOrEqual(2);
    } finally {
      await service.close();
    }
  });

  /**
   * `script` (as bash would run it in a terminal) through a pseudo-terminal, `key` typed at the first prompt:
   * what the terminal showed, and the status script reports (the script's own).
   */
  async function typedAtPrompt(key: string, script: string, config?: object) {
    const dir = makeTempDir('facectl-prompt-');
    if (config) writeFileSync(join(dir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      NO_COLOR: '1',
      FACECTL_CONFIG_DIR: dir,
      FACECTL_API_KEY: config ? undefined : KEY,
      FACECTL: `"${process.execPath}" "${BIN}"`,
    };
    const child = spawn('script', ['-qefc', `bash -c '${script}'`, '/dev/null'], { cwd: ROOT, env });
    const watched = watchChild(child, 20_000);
    await until(() => /\?.*(face|Replace)/.test(watched.stdout()), 'the first prompt');
    child.stdin.write(key);
    const { code } = await watched.exit;
    return { code, shown: watched.stdout().replaceAll('\r\n', '\n') };
  }

  it('Ctrl-C at a prompt ends facectl by SIGINT, as the terminal would: a shell loop stops (a breaker saw it go on, 130)', async () => {
    const { code, shown } = await typedAtPrompt(
      '\x03',
      'for i in 1 2; do eval "$FACECTL faces create"; echo "after $i: $?"; done',
    );
    expect(shown).toContain('error: interrupted');
    expect(shown).not.toContain('after 1');
    expect(code).toBe(130);
  });

  it('Ctrl-D (the input ended) at a prompt: no answer, exit 1, not 130; at a yes/no question its default, No', async () => {
    const typed = await typedAtPrompt('\x04', 'eval "$FACECTL faces create"; echo "after: $?"');
    expect(typed.shown).toContain('error: no answer: the input ended at the prompt (Ctrl-D)');
    expect(typed.shown).toContain('after: 1');
    const config = { profiles: { default: { api_key: KEY } } };
    const asked = await typedAtPrompt('\x04', 'eval "$FACECTL keys create --name x --save"; echo "after: $?"', config);
    expect(asked.shown).toContain(
      `Not replaced: profile default still holds key ${KEY.slice(0, 12)}…; no key was created`,
    );
    expect(asked.shown).toContain('after: 1');
  });

  it('Ctrl-Z at a prompt, then `fg`: the prompt goes on with what was typed (a ring saw it end as Ctrl-D, "no answer")', async () => {
    const dir = makeTempDir('facectl-prompt-');
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      NO_COLOR: '1',
      FACECTL_CONFIG_DIR: dir,
      FACECTL_API_KEY: KEY,
    };
    // Job control (set -m) as in a terminal's shell: the stopped job is reported, then brought back.
    const script = `set -m; "${process.execPath}" "${BIN}" faces create; echo "stopped: $?"; fg`;
    const child = spawn('script', ['-qefc', `bash -c '${script}'`, '/dev/null'], { cwd: ROOT, env });
    const watched = watchChild(child, 20_000);
    const shown = () => watched.stdout().replaceAll('\r\n', '\n');
    await until(() => /\?.*face/.test(shown()), 'the first prompt');
    child.stdin.write('Ann\x1a');
    await until(() => shown().includes('stopped: 148'), 'the job to stop');
    child.stdin.write(' B\r');
    await until(() => shown().includes('? Alias'), 'the next question');
    child.stdin.write('\x03');
    const { code } = await watched.exit;
    expect(shown()).toContain('✔ Display name of the face Ann B');
    expect(shown()).not.toContain('no answer');
    expect(code).toBe(130);
  });

  it('--json: two Ctrl-C during a batch leave exactly one error document on stderr, and the process ends by SIGINT', async () => {
    const service = await startTestService();
    try {
      const key = service.key('pro');
      await createFace(service, key, 'ada-twice');
      const errorLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('{"error"'));
      // Back to back, as a user's two quick Ctrl-C or a supervisor's repeated signal; with --json and without.
      const cases = [
        ...[0, 1, 2, 5].map((gapMs) => ({ gapMs, json: true })),
        ...[0, 1].map((gapMs) => ({ gapMs, json: false })),
      ];
      for (const { gapMs, json } of cases) {
        const proxy = slowProxy(server, service.baseUrl, 30);
        proxy.holdAfter(2);
        const { file } = batchFile('ada-twice', `twice${json ? '' : '-text'}${gapMs}-`, 20);
        const args = ['docs', 'submit', '--file', file, ...(json ? ['--json'] : [])];
        const run = start(args, batchEnv(key, server.baseUrl));
        await until(() => proxy.answered() >= 2, 'two answers');
        run.child.kill('SIGINT');
        if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
        run.child.kill('SIGINT');
        const exit = await run.exit;
        proxy.release();
        const said = `${gapMs} ms apart${json ? ', --json' : ''}: ${run.stderr()}`;
        expect(exit, said).toEqual({ code: 130, signal: 'SIGINT' });
        if (json) {
          expect(errorLines(run.stderr()), said).toHaveLength(1);
          const { error } = JSON.parse(errorLines(run.stderr())[0] as string);
          expect(error.code).toBe('interrupted');
          // The counts, whichever signal's error it is (the second's, ending at once, as the first's would have).
          expect(error.warnings, said).toHaveLength(1);
          expect(countsAddUp(error.warnings[0]), said).toBe(20);
        } else {
          // The counts, then the one error.
          expect(run.stderr().match(/^error: /gm), said).toHaveLength(1);
          expect(countsAddUp(/^Submitted .*$/m.exec(run.stderr())?.[0] ?? ''), said).toBe(20);
        }
      }
      // The second signal after the first's error document is written, while the process still waits
      // for its output to drain (a reader that stopped reading): no second document, and it ends at once.
      const { file } = batchFile('ada-twice', 'twice-drain-', 3000, (i) => `line ${i}`);
      // stdout: a FIFO the test holds open and never reads (its 64 KB fill after about 850 result lines).
      const fifo = join(makeTempDir('facectl-fifo-'), 'out');
      execFileSync('mkfifo', [fifo]);
      const reader = openSync(fifo, 'r+');
      const child = spawn(process.execPath, [BIN, 'docs', 'submit', '--file', file, '--json'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/tmp',
          ...batchEnv(key, service.baseUrl),
        },
        stdio: ['ignore', reader, 'pipe'],
      });
      closeSync(reader);
      const run = watchChild(child);
      await until(() => stored(service, 'twice-drain-').length >= 1200, '1200 documents stored');
      child.kill('SIGINT');
      await until(() => errorLines(run.stderr()).length > 0, 'the error document');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(child.exitCode === null && child.signalCode === null, 'still waiting for its output to drain').toBe(true);
      child.kill('SIGINT');
      const exit = await run.exit;
      expect(exit, run.stderr()).toEqual({ code: 130, signal: 'SIGINT' });
      expect(errorLines(run.stderr())).toHaveLength(1);
      expect(JSON.parse(errorLines(run.stderr())[0] as string).error.message).toMatch(
        /^interrupted: \d+ of 3000 documents were submitted(, \d+ sent without an answer \(.+ twice\))?$/,
      );
    } finally {
      await service.close();
    }
  });

  it('two signals at once during a batch: every result printed is in its record, so --resume sends none again', async () => {
    const service = await startTestService();
    try {
      const key = service.key('pro');
      await createFace(service, key, 'ada-record');
      // A ring's find: the second signal ended the process before the records queued for the journal (written
      // every 100 ms) were, so the record held fewer lines than were printed (115 printed, 0 recorded).
      // Two kinds (two of one kind sent at once may arrive as one), soon after the first results (the journal's
      // first write is 100 ms after the first answer).
      const pairs = [
        ['SIGINT', 'SIGTERM'],
        ['SIGTERM', 'SIGINT'],
        ['SIGINT', 'SIGTERM'],
        ['SIGTERM', 'SIGINT'],
      ] as const;
      for (const [i, [first, second]] of pairs.entries()) {
        const { file } = batchFile('ada-record', `record${i}-`, 3000, (n) => `line ${n}`);
        const env = batchEnv(key, service.baseUrl);
        const run = start(['docs', 'submit', '--file', file, '--json', '--concurrency', '8'], env);
        await until(() => resultLines(run.stdout()).length >= 1, 'a result printed');
        run.child.kill(first);
        run.child.kill(second);
        const exit = await run.exit;
        const said = `${first} then ${second}: ${JSON.stringify(exit)} ${run.stderr()}`;
        const printed = resultLines(run.stdout()).map((result) => result.document_id);
        const recorded = new Set(
          journalFiles(env.FACECTL_CONFIG_DIR)
            .flatMap((path) => readFileSync(path, 'utf8').split('\n'))
            .map((line) => /"document_id":"([^"]+)"/.exec(line)?.[1]),
        );
        expect(printed.length, said).toBeGreaterThanOrEqual(1);
        expect(
          printed.filter((id) => !recorded.has(id)),
          said,
        ).toEqual([]);
      }
    } finally {
      await service.close();
    }
  }, 60_000);

  it('--jq: Ctrl-C during a batch stops it as under --json (130, the error, the --resume command), and so does a SIGTERM 10 ms after', async () => {
    const service = await startTestService();
    try {
      const key = service.key('pro');
      await createFace(service, key, 'ada-jq');
      // A ring's find: under --jq a Ctrl-C was now and then ignored (the batch ran to its end, exit 0), and a second
      // signal ended it with nothing said; jq ran with the handlers set aside. A filter that takes a few ms per
      // result keeps the process in jq most of the time, so each run below lands a signal during one.
      const filter = '.document_id as $d | ([range(10000)] | length) as $n | $d';
      for (let i = 0; i < 8; i++) {
        const then = i % 2 === 0 ? undefined : 'SIGTERM';
        const proxy = slowProxy(server, service.baseUrl, 20);
        const { file } = batchFile('ada-jq', `jq${i}-`, 400, (n) => `line ${n}`);
        const run = start(
          ['docs', 'submit', '--file', file, '--concurrency', '12', '--jq', filter],
          batchEnv(key, server.baseUrl),
        );
        await until(() => proxy.answered() >= 24, 'a few answers');
        run.child.kill('SIGINT');
        if (then !== undefined) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          run.child.kill(then);
        }
        const exit = await run.exit;
        const said = `run ${i}${then ? ', SIGTERM 10 ms after' : ''}: ${JSON.stringify(exit)} ${run.stderr()}`;
        // As under --json: one error document on stderr, with the counts and the --resume command.
        const errors = run
          .stderr()
          .split('\n')
          .filter((line) => line.startsWith('{"error"'));
        expect(errors, said).toHaveLength(1);
        const { error } = JSON.parse(errors[0] as string);
        expect(error.code, said).toBe('interrupted');
        expect(error.hint, said).toContain(`facectl docs submit --file ${file} --resume`);
        expect(error.warnings, said).toEqual([expect.stringMatching(/^Submitted \d+ of 400 documents/)]);
        if (then === undefined) {
          expect(exit, said).toEqual({ code: 130, signal: 'SIGINT' });
          expect(error.message, said).toMatch(/^interrupted: \d+ of 400 documents were submitted/);
        } else {
          // The second ends the batch at once if it comes before the first's error is written, saying so.
          expect([130, 143], said).toContain(exit.code);
          expect(error.message, said).toMatch(
            /^(interrupted: \d+ of 400|stopped at once by SIGTERM after Ctrl-C \(SIGINT\))/,
          );
        }
        expect(stored(service, `jq${i}-`).length, said).toBeLessThan(400);
      }
    } finally {
      await service.close();
    }
  }, 120_000);

  it.each(['text', '--json'])(
    'a second Ctrl-C while the batch winds down (%s) gives the --resume command, as the first would have',
    async (form) => {
      const json = form === '--json';
      const service = await startTestService();
      try {
        const key = service.key('pro');
        await createFace(service, key, 'ada-second');
        // The journal's closing held back after the first Ctrl-C (a slow disk): the second comes before
        // the first's error is written.
        const preload = join(makeTempDir('facectl-preload-'), 'slow-close.cjs');
        writeFileSync(
          preload,
          `let stopping = false;
process.on('SIGINT', () => { stopping = true; });
const fsp = require('node:fs/promises');
const { open } = fsp;
fsp.open = async function (...args) {
  const handle = await open.apply(this, args);
  const { close } = handle;
  handle.close = async () => {
    if (stopping) await new Promise((resolve) => setTimeout(resolve, 5000));
    return close.call(handle);
  };
  return handle;
};
`,
        );
        const proxy = slowProxy(server, service.baseUrl, 30);
        proxy.holdAfter(2);
        const { file } = batchFile('ada-second', `second${form}-`, 20);
        const args = ['docs', 'submit', '--file', file, ...(json ? ['--json'] : [])];
        const run = start(args, { ...batchEnv(key, server.baseUrl), NODE_OPTIONS: `--require ${preload}` });
        await until(() => proxy.answered() >= 2, 'two answers');
        run.child.kill('SIGINT');
        await new Promise((resolve) => setTimeout(resolve, 500));
        run.child.kill('SIGINT');
        const exit = await run.exit;
        proxy.release();
        expect(exit, run.stderr()).toEqual({ code: 130, signal: 'SIGINT' });
        const hint = `Run \`facectl docs submit --file ${file} --resume${json ? ' --json' : ''}\` to send the rest (lines already submitted are not sent again)`;
        if (json) {
          const errors = run
            .stderr()
            .split('\n')
            .filter((line) => line.startsWith('{"error"'));
          // With the counts the first's error would have given (its `warnings`).
          const summary = expect.stringMatching(/^Submitted \d+ of 20 documents/);
          expect(errors.map((line) => JSON.parse(line))).toEqual([
            {
              error: {
                code: 'interrupted',
                message: 'stopped at once by a second Ctrl-C (SIGINT)',
                hint,
                warnings: [summary],
              },
            },
          ]);
          expect(countsAddUp(JSON.parse(errors[0] as string).error.warnings[0])).toBe(20);
        } else {
          expect(run.stderr()).toContain(`error: stopped at once by a second Ctrl-C (SIGINT)\n${hint}\n`);
          expect(countsAddUp(/^Submitted .*$/m.exec(run.stderr())?.[0] ?? ''), run.stderr()).toBe(20);
        }
      } finally {
        await service.close();
      }
    },
  );

  it('a signal once a batch has finished, as the process exits: exit 0 as the finished run, not a death by it with nothing said', async () => {
    const service = await startTestService();
    try {
      const key = service.key('pro');
      await createFace(service, key, 'ada-late');
      // A breaker's find: SIGINT or SIGTERM after the last result line, as Node wound down, killed the process (130,
      // 143) with only the summary said, the batch finished and recorded: Node gives the signals their default action
      // back as it exits. Its exit is held here, from the moment it emits 'exit', on a FIFO no one has opened yet.
      const dir = makeTempDir('facectl-late-');
      const [hold, exiting, preload] = [join(dir, 'hold'), join(dir, 'exiting'), join(dir, 'hold-exit.cjs')];
      execFileSync('mkfifo', [hold]);
      writeFileSync(
        preload,
        `const fs = require('node:fs');
process.on('exit', () => {
  fs.open(${JSON.stringify(hold)}, 'r', () => undefined);
  fs.writeFileSync(${JSON.stringify(exiting)}, '');
});
`,
      );
      const cases = [
        { signals: ['SIGINT'], json: true },
        { signals: ['SIGTERM'], json: false },
        { signals: ['SIGINT', 'SIGTERM'], json: true },
      ] as const;
      for (const [i, { signals, json }] of cases.entries()) {
        const { file } = batchFile('ada-late', `late${i}-`, 200, (n) => `line ${n}`);
        const env = batchEnv(key, service.baseUrl);
        const args = ['docs', 'submit', '--file', file, ...(json ? ['--json'] : [])];
        const run = start(args, { ...env, NODE_OPTIONS: `--require ${preload}` });
        await until(() => existsSync(exiting), 'the process exiting');
        // Once the process no longer catches the signal (Node's wind-down gave it back its default action), or after
        // 1 s: a process ended as it should be catches it to its very end.
        const pid = run.child.pid as number;
        const deadline = Date.now() + 1_000;
        while (catches(pid, signals[0]) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
        for (const signal of signals) run.child.kill(signal);
        await Promise.race([run.exit, new Promise((resolve) => setTimeout(resolve, 200))]);
        closeSync(openSync(hold, 'r+'));
        const exit = await run.exit;
        rmSync(exiting);
        const said = `${signals.join(' and ')}${json ? ', --json' : ''}: ${JSON.stringify(exit)} ${run.stderr()}`;
        expect(exit, said).toEqual({ code: 0, signal: null });
        const summary = /^Submitted 200 of 200 documents\. /m;
        if (json) {
          expect(resultLines(run.stdout()).filter((result) => result.ok)).toHaveLength(200);
          const notices = run
            .stderr()
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line));
          expect(notices, said).toEqual([{ notice: expect.stringMatching(summary) }]);
        } else {
          expect(run.stdout().trim().split('\n')).toHaveLength(200);
          expect(run.stderr(), said).toMatch(summary);
          expect(run.stderr(), said).not.toContain('error');
        }
        expect(new Set(stored(service, `late${i}-`).map((d) => d.label)).size).toBe(200);
        // Its record is finished: --resume has nothing to send.
        const resumed = start(['docs', 'submit', '--file', file, '--resume'], env);
        expect(await resumed.exit, resumed.stderr()).toEqual({ code: 0, signal: null });
        expect(resumed.stderr()).toContain('batch already finished: 200 documents sent; nothing to do');
        expect(stored(service, `late${i}-`)).toHaveLength(200);
      }
    } finally {
      await service.close();
    }
  }, 60_000);

  it.each(['text', '--json'])(
    'a second signal while a finished batch still writes its results (%s): the error says nothing is left to resume',
    async (form) => {
      const json = form === '--json';
      const service = await startTestService();
      try {
        const key = service.key('pro');
        await createFace(service, key, 'ada-drain');
        // A ring's find: once a batch had finished, a second signal while its results still drained ended the process
        // (130, 143) with no error document under --json, and in text with the --resume command "to send the rest".
        const { file } = batchFile('ada-drain', `drain${form}-`, 3000, (i) => `line ${i}`);
        const env = batchEnv(key, service.baseUrl);
        const { child, run } = unreadBatch(file, env, json ? ['--json'] : []);
        // Finished: its summary said (under --json once the command has returned), its record renamed and unlocked.
        const batches = join(env.FACECTL_CONFIG_DIR, 'state', 'batches');
        const entries = () => (existsSync(batches) ? readdirSync(batches) : []);
        await until(() => /Submitted 3000 of 3000 documents\. /.test(run.stderr()), 'the summary');
        await until(
          () =>
            entries().some((name) => name.endsWith('.finished')) && !entries().some((name) => name.endsWith('.lock')),
          'the batch recorded as finished',
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(child.exitCode === null && child.signalCode === null, 'still writing its results').toBe(true);
        // Two kinds: two of one kind sent at once may arrive as one.
        child.kill('SIGINT');
        child.kill('SIGTERM');
        const exit = await run.exit;
        const said = `${JSON.stringify(exit)} ${run.stderr()}`;
        expect([130, 143], said).toContain(exit.code);
        const message = /^stopped at once by (SIGTERM after Ctrl-C \(SIGINT\)|Ctrl-C \(SIGINT\) after SIGTERM)$/;
        const hint =
          'The batch had finished: every document was submitted and recorded; nothing is left to resume ' +
          '(--resume prints the results again, sending nothing)';
        if (json) {
          const errors = run
            .stderr()
            .split('\n')
            .filter((line) => line.startsWith('{"error"'));
          expect(
            errors.map((line) => JSON.parse(line)),
            said,
          ).toEqual([{ error: { code: 'interrupted', message: expect.stringMatching(message), hint } }]);
        } else {
          const lines = run.stderr().trimEnd().split('\n').slice(-2);
          expect(lines[0], said).toMatch(new RegExp(`^error: ${message.source.slice(1)}`));
          expect(lines[1], said).toBe(hint);
        }
        expect(stored(service, `drain${form}-`)).toHaveLength(3000);
      } finally {
        await service.close();
      }
    },
    60_000,
  );

  it('one SIGTERM mid-batch whose results nobody reads: the process ends within seconds (130/143), said so', async () => {
    const service = await startTestService();
    try {
      const key = service.key('pro');
      await createFace(service, key, 'ada-stuck');
      // A breaker's find: with stdout a pipe nobody reads, the error was said at once but the process lived on
      // until the reader read or a second signal came, so `kill $pid; wait $pid` hung.
      const { file } = batchFile('ada-stuck', 'stuck-', 3000, (i) => `line ${i}`);
      const { child, run } = unreadBatch(file, batchEnv(key, service.baseUrl), ['--json']);
      // Its 64 KB pipe full after about 850 results: the batch waits on it.
      await until(() => stored(service, 'stuck-').length >= 800, 'the pipe filled');
      child.kill('SIGTERM');
      const exit = await Promise.race([
        run.exit,
        new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 10_000)),
      ]);
      if (exit === 'alive') child.kill('SIGKILL');
      expect(exit, run.stderr()).toEqual({ code: 143, signal: 'SIGTERM' });
      const errors = run
        .stderr()
        .split('\n')
        .filter((line) => line.startsWith('{"error"'));
      expect(errors.map((line) => JSON.parse(line).error.code)).toEqual(['interrupted']);
    } finally {
      await service.close();
    }
  }, 60_000);

  it('one SIGTERM once a batch has finished, its results unread: it exits 0 within seconds, all submitted', async () => {
    const service = await startTestService();
    try {
      const key = service.key('pro');
      await createFace(service, key, 'ada-done');
      // A ring's find: every line sent and recorded, only its results left to write to a reader that never read:
      // one SIGTERM changed nothing until the reader went away (27 s, 117 s).
      const { file } = batchFile('ada-done', 'done-', 3000, (i) => `line ${i}`);
      const env = batchEnv(key, service.baseUrl);
      const { child, run } = unreadBatch(file, env, ['--json']);
      const batches = join(env.FACECTL_CONFIG_DIR, 'state', 'batches');
      await until(
        () => existsSync(batches) && readdirSync(batches).some((name) => name.endsWith('.finished')),
        'the batch recorded as finished',
      );
      child.kill('SIGTERM');
      const exit = await Promise.race([
        run.exit,
        new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 10_000)),
      ]);
      if (exit === 'alive') child.kill('SIGKILL');
      expect(exit, run.stderr()).toEqual({ code: 0, signal: null });
      expect(stored(service, 'done-')).toHaveLength(3000);
    } finally {
      await service.close();
    }
  }, 60_000);

  it('case 32: output piped into head (EPIPE) -> quiet exit', async () => {
    // A 16 MB answer cannot fit in the pipe, so the CLI is still writing when the reader goes away.
    server.handle((_req, res) =>
      json(res, 200, { alias: 'ada-x', created: 1767225600, owned_by: 'usr_1', pad: 'x'.repeat(16 * 1024 * 1024) }),
    );
    const run = start(['api', 'GET', '/v1/faces/face_1'], { FACECTL_BASE_URL: server.baseUrl, FACECTL_API_KEY: KEY });
    await Promise.race([new Promise<void>((resolve) => run.child.stdout.once('data', () => resolve())), run.exit]);
    expect(run.child.exitCode, run.stderr()).toBeNull(); // still writing
    run.child.stdout.destroy(); // like `| head -c 100` exiting
    const { code, signal } = await run.exit;
    expect(run.stderr()).toBe('');
    expect(signal === 'SIGPIPE' || code === 0 || code === 141).toBe(true);
  });

  it('case 33: Ctrl-C while waiting for an OAuth connection -> exit 130', async () => {
    const run = start(['oauth', 'connect', 'example', '--no-browser'], serve.env('connect'));
    await run.waitFor(/\/authorize|https?:\/\/\S+/);
    const before = await serve.settledRequests();
    expect(before).toBeGreaterThanOrEqual(1);
    run.child.kill('SIGINT');
    const { code, signal } = await run.exit;
    expect(code, run.stderr()).toBe(130);
    // Ended by the signal itself (a shell's $? is 130), so a script or loop around it stops too.
    expect(signal).toBe('SIGINT');
    expect(run.stderr()).toMatch(/interrupted|cancel/i);
    // Not connected: the provider list still shows no connection.
    const list = await fetch(`${serve.baseUrl}/v1/oauth`, {
      headers: { Authorization: `Bearer ${serve.key('connect')}` },
    });
    expect(JSON.stringify(await list.json())).not.toMatch(/"connected":\s*true/);
  });

  it("Ctrl-C after a Deny on the consent page: the project's `error: interrupted`, no `Error:` line (nor --debug's stack)", async () => {
    for (const debug of [[], ['--debug']]) {
      const run = start(['oauth', 'connect', 'example', '--no-browser', ...debug], serve.env('connect'));
      const authorize = /http:\/\/\S+\/authorize\?\S+/;
      await run.waitFor(authorize);
      await approveConsent(authorize.exec(run.stderr())?.[0] as string, 'deny');
      // A poll of GET /v1/oauth after the Deny (one a second), then the Ctrl-C.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      run.child.kill('SIGINT');
      const { code, signal } = await run.exit;
      expect(code, run.stderr()).toBe(130);
      expect(signal).toBe('SIGINT');
      expect(run.stderr()).toMatch(/^error: interrupted$/m);
      expect(run.stderr()).not.toContain('Error:');
    }
  });

  it('SIGTERM (timeout, a CI cancel) while waiting for an OAuth connection -> exit 143, not 130', async () => {
    const run = start(['oauth', 'connect', 'example', '--no-browser'], serve.env('connect'));
    await run.waitFor(/\/authorize|https?:\/\/\S+/);
    run.child.kill('SIGTERM');
    const { code, signal } = await run.exit;
    expect(code, run.stderr()).toBe(143);
    expect(signal).toBe('SIGTERM');
    expect(run.stderr()).toMatch(/terminated/);
  });
  for (const [signal, code, by] of [
    ['SIGTERM', 143, 'SIGTERM'],
    ['SIGINT', 130, 'Ctrl-C (SIGINT)'],
  ] as const) {
    it(`a second ${signal} while serve waits for a request in flight ends it at once, saying so (--json: one error document)`, async () => {
      const run = start(['serve', '--port', '0', '--json'], {});
      await until(() => run.stdout().includes('\n'), 'serve to print its URL');
      const { base_url: baseUrl, users } = JSON.parse(run.stdout().split('\n')[0] as string) as {
        base_url: string;
        users: { key: string }[];
      };
      const { hostname, port } = new URL(baseUrl);
      // A request whose body is still on its way: the first signal's stop waits for it.
      const held = connect(Number(port), hostname);
      await once(held, 'connect');
      held.write(
        'POST /v1/compile/documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          `Authorization: Bearer ${users[0]?.key}\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n`,
      );
      held.on('error', () => undefined);
      // Told to go on: serve has taken the request.
      await once(held, 'data');
      // Still arriving: a body that stalls is not waited for.
      const trickle = setInterval(() => held.write(' '), 10);
      run.child.kill(signal);
      // The stop has begun once serve takes no new connection.
      const refused = () =>
        new Promise<boolean>((resolve) => {
          const probe = connect(Number(port), hostname);
          probe.once('connect', () => resolve(!probe.destroy()));
          probe.once('error', () => resolve(true));
        });
      for (let tries = 0; !(await refused()); tries++) {
        if (tries > 400) throw new Error('serve did not stop listening');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      run.child.kill(signal);
      const exit = await run.exit;
      clearInterval(trickle);
      held.destroy();
      expect(exit, run.stderr()).toEqual({ code, signal });
      expect(run.stderr().trim().split('\n')).toEqual([
        JSON.stringify({
          notice: 'stopping: waiting up to 10 s for 1 request in flight (a second Ctrl-C or SIGTERM stops at once)',
        }),
        JSON.stringify({ error: { code: 'interrupted', message: `stopped at once by a second ${by}` } }),
      ]);
    });
  }

  it('SIGTERM while `threads replace-messages` waits for its answer: exit 143, saying the service may have applied it', async () => {
    const service = await startTestService();
    try {
      const key = service.key('pro');
      await createFace(service, key, 'ada-term');
      const created = await runCli(['threads', 'create', '--alias', 'ada-term', '--label', 't', '--json'], {
        env: { FACECTL_API_KEY: key, FACECTL_BASE_URL: service.baseUrl },
      });
      expect(created.code, created.stderr).toBe(0);
      const thread = (JSON.parse(created.stdout) as { thread_id: string }).thread_id;
      const proxy = slowProxy(server, service.baseUrl, 0);
      proxy.holdAfter(0);
      const file = join(makeTempDir('facectl-msgs-'), 'm.json');
      writeFileSync(file, JSON.stringify([{ role: 'user', content: 'hello', from: 'ada' }]));
      const run = start(['threads', 'replace-messages', thread, '--file', file], batchEnv(key, server.baseUrl));
      await until(() => proxy.held() === 1, 'the service to apply the replacement');
      run.child.kill('SIGTERM');
      const { code } = await run.exit;
      proxy.release();
      expect(code, run.stderr()).toBe(143);
      // A breaker read only `error: terminated`, while the replacement had been applied.
      expect(run.stderr()).toContain('error: terminated\n');
      expect(run.stderr()).toContain('was on its way: the service may have applied it');
    } finally {
      await service.close();
    }
  });

  it('SIGTERM while `keys create --save` waits for the answer -> the key is still shown and saved, then exit 143', async () => {
    const service = await startTestService();
    try {
      const key = service.key('pro');
      // The service makes the key at once; its answer is held back until the CLI has been told to stop.
      const proxy = slowProxy(server, service.baseUrl, 0);
      proxy.holdAfter(0);
      const env = batchEnv(key, server.baseUrl);
      const run = start(['keys', 'create', '--name', 'term', '--save'], env);
      await until(() => proxy.held() === 1, 'the service to create the key');
      run.child.kill('SIGTERM');
      await run.waitFor(/terminated: waiting for the service's answer/);
      proxy.release();
      const { code } = await run.exit;
      expect(code, run.stderr()).toBe(143);
      const made = [...service.store.values('keys')].filter((k) => k.name === 'term');
      expect(made).toHaveLength(1);
      const secret = /^key\t(fcs_\S+)$/m.exec(run.stdout())?.[1] as string;
      expect(createHash('sha256').update(secret).digest('hex')).toBe(made[0]?.hash);
      expect(run.stdout().split(secret)).toHaveLength(2); // shown once
      expect(run.stderr()).toMatch(/Saved key .* in profile "default"/);
      expect(run.stderr()).toMatch(/error: terminated/);
      expect(run.stderr()).not.toContain(secret);
      const config = JSON.parse(readFileSync(join(env.FACECTL_CONFIG_DIR, 'config.json'), 'utf8'));
      expect(config.profiles.default.api_key).toBe(secret);
    } finally {
      await service.close();
    }
  });
});

/**
 * `docs submit --file FILE` with stdout a FIFO held open and never read (its 64 KB full after about 850 result lines),
 * its state directory in the test's config directory.
 */
function unreadBatch(file: string, env: ReturnType<typeof batchEnv>, args: string[]) {
  const fifo = join(makeTempDir('facectl-fifo-'), 'out');
  execFileSync('mkfifo', [fifo]);
  const reader = openSync(fifo, 'r+');
  const child = spawn(process.execPath, [BIN, 'docs', 'submit', '--file', file, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      NO_COLOR: '1',
      FACECTL_STATE_DIR: join(env.FACECTL_CONFIG_DIR, 'state'),
      ...env,
    },
    stdio: ['ignore', reader, 'pipe'],
  });
  closeSync(reader);
  return { child, run: watchChild(child) };
}

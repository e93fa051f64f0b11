import { execFile, spawn, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { BIN, makeConfigDir, ROOT, runCli } from '../helpers/run-cli.js';
import { argv } from '../helpers/unit-harness.js';
import { useServe } from '../helpers/hooks.js';
import { tempFile } from '../helpers/temp.js';
import { readBack } from '../helpers/serve-process.js';
import { decideConsent } from '../helpers/service.js';
import { approveConsent } from '../helpers/command-harness.js';
import { until, watchChild } from '../helpers/watch-child.js';

/** threads create / replace-messages / get / sync and oauth list / connect / disconnect, as the built bin. */

const service = useServe({ face: 'ada-lovelace' });
const env = (plan: 'pro' | 'connect' | 'standard' = 'pro') => service.env(plan);
const storedThread = (id: string) => readBack(service, 'getThread', { thread_id: id });

describe('threads (built bin)', () => {
  it('create, replace-messages from a pipe and from a file, get, sync --wait', async () => {
    const created = await runCli(
      [
        'threads',
        'create',
        '--alias',
        'ada-lovelace',
        '--label',
        'Interview',
        '--interviewer-billing-source',
        'compile',
        '--json',
        '--no-input',
      ],
      { env: env() },
    );
    expect(created.code, created.stderr).toBe(0);
    const id = JSON.parse(created.stdout).thread_id as string;
    expect(await storedThread(id)).toMatchObject({ label: 'Interview', interviewer_billing_source: 'compile' });

    const piped = await runCli(['threads', 'replace-messages', id, '-', '--json', '--no-input'], {
      env: env(),
      stdin: JSON.stringify([{ role: 'user', content: 'Hello', from: 'Charles' }]),
    });
    expect(piped.code, piped.stderr).toBe(0);
    expect(JSON.parse(piped.stdout).message_count).toBe(1);

    const path = tempFile(
      'messages.json',
      JSON.stringify({
        messages: [
          { role: 'assistant', content: 'What is the engine for?', from: 'Interviewer' },
          { role: 'user', content: 'Numbers — and music.', from: 'Ada' },
        ],
      }),
    );
    const fromFile = await runCli(['threads', 'replace-messages', id, '--file', path, '--json'], { env: env() });
    expect(fromFile.code, fromFile.stderr).toBe(0);
    const stored = await storedThread(id);
    expect(stored).toMatchObject({ message_count: 2, messages_archived: 1 });
    expect(stored.messages[1]).toEqual({ role: 'user', content: 'Numbers — and music.', name: 'Ada' });

    const got = await runCli(['threads', 'get', id], { env: env() });
    expect(got.stdout).toContain('message_count\t2\n');

    const synced = await runCli(['threads', 'sync', id, '--wait', '--json', '--no-input'], { env: env() });
    expect(synced.code, synced.stderr).toBe(0);
    expect(JSON.parse(synced.stdout)).toMatchObject({ thread_id: id, synced: true, prepare_status: 'ready' });
  });

  it('a message list with a bad element is exit 2 naming the index; nothing sent', async () => {
    const before = await service.settledRequests();
    const result = await runCli(['threads', 'replace-messages', 'thr_any', '-'], {
      env: env(),
      stdin: JSON.stringify({
        messages: [
          { role: 'user', content: 'a', from: 'A' },
          { role: 'user', from: 'B' },
        ],
      }),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: standard input: messages[1].content: required');
    expect(await service.settledRequests()).toBe(before);
  });

  it("a thread's own messages sent back (name, not from): exit 2, nothing sent; the hint converts that very input, and pasted works", async () => {
    const created = await runCli(argv`threads create --alias ada-lovelace --label round-trip --json`, { env: env() });
    const id = JSON.parse(created.stdout).thread_id as string;
    const sent = [
      { role: 'assistant', content: 'What is the engine for?', from: 'Interviewer' },
      { role: 'user', content: "Numbers, and music: it's not only arithmetic.", from: 'Ada' },
    ];
    const replaced = await runCli(['threads', 'replace-messages', id, '-'], {
      env: env(),
      stdin: JSON.stringify(sent),
    });
    expect(replaced.code, replaced.stderr).toBe(0);
    const got = await runCli(['threads', 'get', id, '--json'], { env: env() });
    const each = 'each message is {"role": ..., "content": ..., "from": ...}';
    const last = (stderr: string) => stderr.trimEnd().split('\n').at(-1);
    // The answer's messages, and the whole answer, on standard input: both refused, saying how to convert that input.
    for (const [stdin, filter] of [
      [JSON.stringify(JSON.parse(got.stdout).messages), "'map({role, content, from: (.from // .name)})'"],
      [got.stdout, "'.messages | map({role, content, from: (.from // .name)})'"],
    ] as const) {
      const before = await service.settledRequests();
      const refused = await runCli(['threads', 'replace-messages', id, '-'], { env: env(), stdin });
      expect(refused.code).toBe(2);
      expect(last(refused.stderr)).toBe(
        `${each}; convert them by piping the same input through \`jq ${filter}\` into \`facectl threads replace-messages ${id} -\``,
      );
      expect(await service.settledRequests()).toBe(before);
    }
    // The user's own list, in a file: the hint converts that file, not the thread's messages (a breaker's
    // paste of `threads get ID | jq ...` stored the thread's own messages again, or none, exit 0).
    // Some with "from" already (a ring's list): the conversion keeps it.
    const own = [
      { role: 'user', content: 'My own first words', from: 'Charles' },
      { role: 'assistant', content: 'And my answer', name: 'Ada' },
    ];
    const file = tempFile('m1.json', JSON.stringify(own));
    const before = await service.settledRequests();
    const refused = await runCli(['threads', 'replace-messages', id, '--file', file], { env: env() });
    expect(refused.code).toBe(2);
    const convert = `jq 'map({role, content, from: (.from // .name)})' ${file} | facectl threads replace-messages ${id} -`;
    expect(last(refused.stderr)).toBe(`${each}; convert them with \`${convert}\``);
    expect(await service.settledRequests()).toBe(before);
    if (spawnSync('jq', ['--version']).status !== 0) return; // no jq here: the text is checked above
    // Pasted into a shell as printed, facectl the built bin: the file's messages are stored.
    const pasted = `node=$0 bin=$1; facectl() { "$node" "$bin" "$@"; }; ${convert}`;
    await promisify(execFile)('sh', ['-c', pasted, process.execPath, BIN], {
      env: {
        PATH: process.env.PATH,
        HOME: makeConfigDir(),
        NO_COLOR: '1',
        FACECTL_CONFIG_DIR: makeConfigDir(),
        ...env(),
      },
    });
    const stored = await storedThread(id);
    expect(stored).toMatchObject({ message_count: 2, messages_archived: 2 });
    expect(stored.messages).toEqual([
      { role: 'user', content: 'My own first words', name: 'Charles' },
      { role: 'assistant', content: 'And my answer', name: 'Ada' },
    ]);
  });
});

/** `facectl oauth connect example ARGS` as the Connect-plan user, its pipes to read while it waits. */
const spawnConnect = (args: string[]) =>
  spawn(process.execPath, [BIN, 'oauth', 'connect', 'example', ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: '/tmp',
      NO_COLOR: '1',
      FACECTL_CONFIG_DIR: makeConfigDir(),
      ...env('connect'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** Not connected to start with, whatever another test left (a connected provider needs no approval). */
const disconnected = () =>
  fetch(`${service.baseUrl}/v1/oauth/example`, {
    method: 'DELETE',
    headers: { Authorization: `Bearer ${service.key('connect')}` },
  });

describe('oauth (built bin)', () => {
  it('a Standard-plan key: 403 plan_required explained, exit 6', async () => {
    const result = await runCli(['oauth', 'connect', 'example', '--no-browser'], { env: env('standard') });
    expect(result.code).toBe(6);
    expect(result.stderr).toContain('OAuth connections are only for the Connect plan');
    expect(result.stderr).not.toContain('Open this URL');
  });

  it('connect: the URL on stderr is approved in headless Chromium while the CLI waits; list shows it connected', async () => {
    await disconnected();
    const browser = await launchChromium();
    try {
      // Not --json: this reads the URL from the human form (`--json` gives it as a JSON line, below).
      const child = spawnConnect(['--no-browser', '--timeout', '60']);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL on stderr: ${stderr}`)), 15_000);
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const match = /^ {2}(http:\/\/\S+)$/m.exec(stderr);
          if (match) {
            clearTimeout(timer);
            resolve(match[1] as string);
          }
        });
      });
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));

      const page = await browser.context.newPage();
      await page.goto(url);
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.waitForURL(/\/v1\/oauth\/example\/callback/);
      expect(await page.textContent('h1')).toBe('Connected to example');

      expect(await exited).toBe(0);
      expect(stdout).toMatch(/^provider\texample\nconnected\ttrue\n/);
    } finally {
      await browser.close();
    }
    const list = await runCli(['oauth', 'list', '--json'], { env: env('connect') });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ provider: 'example', connected: true })]);
  }, 60_000);

  it('connect --json, stdout and stderr piped: {"authorize_url"} on stderr at once; approved, exit 0; again: already connected, exit 0', async () => {
    await disconnected();
    const child = spawnConnect(['--json', '--no-browser']);
    const watched = watchChild(child, 60_000);
    // Said while it waits (before any approval), as one JSON line.
    await until(() => watched.stderr().includes('\n'), 'the authorize URL line on stderr');
    const { authorize_url: url } = JSON.parse(watched.stderr().split('\n')[0] as string) as { authorize_url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/provider\/example\/authorize\?/);
    expect(watched.stdout()).toBe('');
    expect(await approveConsent(url)).toContain('Connected to example');
    expect(await watched.exit).toEqual({ code: 0, signal: null });
    const connection = JSON.parse(watched.stdout()) as { connected: boolean; connected_at: string };
    expect(connection).toMatchObject({ provider: 'example', connected: true });
    expect(watched.stderr()).toBe(`${JSON.stringify({ authorize_url: url })}\n`);

    // Connected already: no wait, no new authorization; only the list is asked for.
    const before = await service.settledRequests();
    const again = await runCli(['oauth', 'connect', 'example', '--json', '--no-browser'], { env: env('connect') });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(connection);
    // Under --json every stderr line is JSON: the message is a notice.
    expect(again.stderr).toBe(
      `${JSON.stringify({
        notice:
          `example is already connected (since ${connection.connected_at}); nothing to do. ` +
          'To connect another account, run `facectl oauth disconnect example --yes` first.',
      })}\n`,
    );
    expect(await service.settledRequests()).toBe(before + 1);
    // The command it names runs as it is, without a terminal too.
    const named = await runCli(['oauth', 'disconnect', 'example', '--yes'], { env: env('connect') });
    expect(named.code, named.stderr).toBe(0);
  });

  it('disconnect: without --yes and without a terminal, exit 2; with --yes, disconnected', async () => {
    // Its own connection, made over plain HTTP, so this test does not depend on the browser test.
    const { callback } = await decideConsent(service, service.key('connect'), 'approve');
    expect(callback.status, callback.text).toBe(200);
    const refused = await runCli(['oauth', 'disconnect', 'example'], { env: env('connect') });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes is required');
    const done = await runCli(['oauth', 'disconnect', 'example', '--yes', '--json'], { env: env('connect') });
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({ detail: 'Disconnected from example' });
    const list = await runCli(['oauth', 'list'], { env: env('connect') });
    expect(list.stdout).toBe('example\tfalse\t\n');
  });
});

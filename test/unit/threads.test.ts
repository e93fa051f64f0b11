import { truncateSync } from 'node:fs';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCreateThread } from '../../src/commands/threads/create.js';
import { runReplaceMessages } from '../../src/commands/threads/replace-messages.js';
import syncThread from '../../src/commands/threads/sync.js';
import { run } from '../../src/main.js';
import { contextFor, requestCount, runCommand } from '../helpers/command-harness.js';
import { call, expectContract } from '../helpers/service.js';
import { useService, useTempFiles } from '../helpers/service-suite.js';
import { argv, callVerb, expectRefused } from '../helpers/unit-harness.js';

const service = useService({}, { faces: ['ada-lovelace'] });
const { file } = useTempFiles('facectl-threads-');
const MESSAGES = [
  { role: 'assistant', content: 'What drew you to the engine?', from: 'Interviewer' },
  { role: 'user', content: 'Its poetry — «algebraic patterns».', from: 'Ada' },
];

const storedThread = async (id: string) =>
  expectContract(
    'getThread',
    await call(service, 'getThread', { key: service.key('pro'), params: { thread_id: id } }),
    200,
  );
const newThread = async (label = 'interview') => {
  const tc = contextFor(service);
  const thread = await runCreateThread(tc.ctx, { alias: 'ada-lovelace', label });
  await tc.close();
  return thread.thread_id as string;
};

describe('threads create', () => {
  it('run() creates the thread with a billing override; the service stored it', async () => {
    const [thread, tc] = await callVerb(service, (ctx) =>
      runCreateThread(ctx, { alias: 'ada-lovelace', label: 'Interview 1', interviewerBillingSource: 'credits' }),
    );
    expect(tc.stdout()).toContain(`thread_id\t${thread.thread_id}\n`);
    expect(tc.stdout()).toContain('interviewer_billing_source\tcredits\n');
    expect(await storedThread(thread.thread_id as string)).toMatchObject({
      alias: 'ada-lovelace',
      label: 'Interview 1',
      interviewer_billing_source: 'credits',
      message_count: 0,
    });
  });

  it('script form prints the service object under --json', async () => {
    const result = await runCommand(
      service,
      argv`threads create --alias ada-lovelace --label scripted --json --no-input`,
    );
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed).toEqual(await storedThread(printed.thread_id));
  });

  it('terminal form: a missing --alias is asked for (the label came as a flag)', async () => {
    const tc = contextFor(service, { stdinIsTTY: true, stdoutIsTTY: true, answers: ['ada-lovelace'] });
    const code = await run(['threads', 'create', '--label', 'asked'], tc.ctx);
    await tc.close();
    expect(code, tc.stderr()).toBe(0);
    tc.assertNoLeftoverAnswers();
    expect(tc.prompts).toEqual([{ kind: 'input', message: 'Alias of the face the thread belongs to' }]);
    const id = /thread_id +(thr_\w+)/.exec(stripVTControlCharacters(tc.stdout()))?.[1] as string;
    expect(await storedThread(id)).toMatchObject({ alias: 'ada-lovelace', label: 'asked' });
  });

  it('--interviewer-billing-source outside its set is exit 2 listing the values (case 6)', async () => {
    const before = requestCount(service);
    const result = await runCommand(
      service,
      argv`threads create --alias ada-lovelace --label x --interviewer-billing-source card`,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: --interviewer-billing-source: must be one of oauth, compile, credits');
    expect(requestCount(service)).toBe(before);
  });

  it('an override that cannot apply (oauth on the pro plan) is exit 5 with the fix', async () => {
    const result = await runCommand(
      service,
      argv`threads create --alias ada-lovelace --label x --interviewer-billing-source oauth`,
    );
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('billing_source_unavailable');
    expect(result.stderr).toContain('choose another --interviewer-billing-source');
  });

  it('without a terminal a missing --alias and --label are named in one error, exit 2, nothing sent', async () => {
    await expectRefused(
      service,
      ['threads', 'create'],
      [
        'error: --alias and --label are required when not running interactively (standard input is not a terminal)\npass --alias VALUE --label VALUE\n',
      ],
    );
  });

  it('without a terminal a missing --label is exit 2 naming the flag', async () => {
    const result = await runCommand(service, ['threads', 'create', '--alias', 'ada-lovelace']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--label is required when not running interactively');
  });
});

describe('threads replace-messages', () => {
  it('run() replaces the messages; the service stored them (from comes back as name)', async () => {
    const id = await newThread();
    const tc = contextFor(service);
    const thread = await runReplaceMessages(tc.ctx, { threadId: id, messages: MESSAGES });
    await tc.close();
    expect(thread.message_count).toBe(2);
    expect(tc.stdout()).toContain('message_count\t2\n');
    const stored = await storedThread(id);
    expect(stored.messages).toEqual([
      { role: 'assistant', content: 'What drew you to the engine?', name: 'Interviewer' },
      { role: 'user', content: 'Its poetry — «algebraic patterns».', name: 'Ada' },
    ]);
  });

  it('from a file holding {"messages": [...]}, then from standard input holding an array: old ones archived', async () => {
    const id = await newThread();
    const first = await runCommand(
      service,
      argv`threads replace-messages ${id} --file ${file('m.json', JSON.stringify({ messages: MESSAGES }))} --json`,
    );
    expect(first.code, first.stderr).toBe(0);
    const second = await runCommand(service, ['threads', 'replace-messages', id, '-', '--json', '--no-input'], {
      stdin: JSON.stringify([{ role: 'user', content: 'Only this now', from: 'Ada' }]),
    });
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ message_count: 1, messages_archived: 2 });
    expect((await storedThread(id)).messages).toEqual([{ role: 'user', content: 'Only this now', name: 'Ada' }]);
  });

  it('a file name after -- that looks like a flag: the hint says --file=NAME (--file NAME would be refused)', async () => {
    const result = await expectRefused(service, argv`threads replace-messages thr_1 -- -m.json`, []);
    expect(result.stderr).toBe('error: unexpected argument "-m.json"\nto read a file, use --file=-m.json\n');
    expect(result.stdout).toBe('');
  });

  it('- without a thread id: the thread id is said to be missing, with the synopsis (exit 2, nothing sent)', async () => {
    const stdin = JSON.stringify(MESSAGES);
    const result = await expectRefused(service, argv`threads replace-messages - --json`, [], { stdin });
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'usage',
        message: "missing required argument 'thread_id' (the thread id comes before -)",
        hint: 'usage: facectl threads replace-messages [flags] <thread_id> [input]',
      },
    });
    const human = await expectRefused(service, argv`threads replace-messages --file ${file('m.json', stdin)} -`, []);
    expect(human.stderr).toBe(
      "error: missing required argument 'thread_id' (the thread id comes before -)\n" +
        'usage: facectl threads replace-messages [flags] <thread_id> [input]\n',
    );
    // The synopsis commander prints when nothing is given at all.
    await expectRefused(service, argv`threads replace-messages`, [
      "error: missing required argument 'thread_id'\nusage: facectl threads replace-messages [flags] <thread_id> [input]\n",
    ]);
  });

  it('a messages file over 64 MiB: exit 2, nothing sent, and no advice to split it into documents', async () => {
    const huge = file('huge.json', '');
    truncateSync(huge, 65 * 1024 * 1024); // sparse: refused by its size, before it is read
    const result = await expectRefused(service, argv`threads replace-messages thr_1 --file ${huge}`, []);
    expect(result.stderr).toBe(`error: ${huge} is larger than 64 MiB, the service's request size limit\n`);
  });

  it("'.' or '..' as the thread id: exit 2 naming <thread_id>, nothing sent (the URL would address another endpoint)", async () => {
    const path = file('m.json', JSON.stringify(MESSAGES));
    for (const id of ['.', '..']) {
      const result = await expectRefused(service, argv`threads replace-messages ${id} --file ${path}`, []);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        `error: <thread_id>: '${id}' cannot be sent as a path segment\n` +
          `a URL reads '${id}' (even percent-encoded) as a step of its path, which would address another endpoint; nothing was sent\n`,
      );
    }
  });

  it('a bad element is exit 2 naming its index (case 9); nothing sent, nothing changed', async () => {
    const id = await newThread();
    const path = file('bad.json', JSON.stringify([...MESSAGES, MESSAGES[0], { role: 'user', content: 'no speaker' }]));
    await expectRefused(
      service,
      argv`threads replace-messages ${id} --file ${path}`,
      `error: ${path}: messages[3].from: required`,
    );
    expect((await storedThread(id)).message_count).toBe(0);
  });

  it('malformed JSON names file, line and column; a terminal on stdin is refused; no input is refused', async () => {
    const id = await newThread();
    const path = file('broken.json', '[\n  {"role": "user", "content": "x", "from": "A"},\n  {"role": \n');
    const before = requestCount(service);
    const broken = await runCommand(service, ['threads', 'replace-messages', id, '--file', path]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`error: ${path}: line 4, column 1: invalid JSON`);
    const tty = await runCommand(service, ['threads', 'replace-messages', id, '-'], { stdinIsTTY: true });
    expect(tty.code).toBe(2);
    expect(tty.stderr).toContain('standard input is a terminal');
    const none = await runCommand(service, ['threads', 'replace-messages', id]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no messages given');
    expect(requestCount(service)).toBe(before);
  });

  it('an unknown thread is exit 4', async () => {
    const result = await runCommand(service, ['threads', 'replace-messages', 'thr_missing', '-'], { stdin: '[]' });
    expect(result.code).toBe(4);
  });
});

describe('threads get and sync', () => {
  it('get shows the thread and its messages, piped (TSV rows after a blank line) and on a terminal', async () => {
    const id = await newThread('to read');
    const tc0 = contextFor(service);
    await runReplaceMessages(tc0.ctx, { threadId: id, messages: MESSAGES });
    await tc0.close();
    const piped = await runCommand(service, ['threads', 'get', id]);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain(`thread_id\t${id}\n`);
    expect(piped.stdout).toMatch(/\nupdated_at\t[^\n]+\n\n/);
    expect(piped.stdout.split('\n\n')[1]).toBe(
      'assistant\tInterviewer\tWhat drew you to the engine?\nuser\tAda\tIts poetry — «algebraic patterns».\n',
    );
    const tc = contextFor(service, { stdoutIsTTY: true, stdinIsTTY: true });
    expect(await run(['threads', 'get', id], tc.ctx)).toBe(0);
    await tc.close();
    expect(stripVTControlCharacters(tc.stdout())).toMatch(/user +Ada +Its poetry/);
    const help = await runCommand(service, ['threads', 'get', '--help']);
    expect(help.stdout).toContain('endpoint the published interface does not show');
  });

  it('sync --wait charges the thread and follows preparation to ready', async () => {
    const id = await newThread('to sync');
    const tc0 = contextFor(service);
    await runReplaceMessages(tc0.ctx, { threadId: id, messages: MESSAGES });
    await tc0.close();
    const tc = contextFor(service, { globals: { json: true } });
    const thread = await syncThread.run(tc.ctx, { wait: true, timeout: 30 }, id);
    await tc.close();
    expect(thread).toMatchObject({ synced: true, prepare_status: 'ready' });
    expect(JSON.parse(tc.stdout())).toEqual(thread);
    expect((await storedThread(id)).synced).toBe(true);
    const help = await runCommand(service, ['threads', 'sync', '--help']);
    expect(help.stdout).toContain('endpoint the published interface does not show');
  });
});

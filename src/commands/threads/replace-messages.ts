import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import type { ThreadMessage } from '../../input/messages.js';
import { flagAndValue, jqCommand, requireArgument, send, shellWord, verb } from '../kit.js';
import { THREAD_FIELDS } from './get.js';

export default verb({
  summary: 'Replace every message of a thread',
  description:
    'Replace every message of a thread (the old ones are archived).\n\n' +
    'The input is a JSON array [{"role", "content", "from"}, ...] or an object {"messages": [...]}, ' +
    'from --file PATH or - (standard input).',
  args: [
    ['<thread_id>', 'the thread id (thr_...)'],
    ['[input]', '- to read the messages from standard input'],
  ],
  flags: { file: { value: '<path>', help: 'read the messages from a file (- for standard input)' } },
  examples: [
    'facectl threads replace-messages thr_4kP9x --file interview.json',
    `echo '[{"role":"user","content":"Hello","from":"Charles"}]' | facectl threads replace-messages thr_4kP9x -`,
    'facectl threads replace-messages thr_4kP9x --file messages.json --json --no-input | jq .message_count',
  ],
  run: async (ctx, given, threadId, input) =>
    runReplaceMessages(ctx, await readMessages(ctx, requireArgument('thread_id', threadId), given.file, input)),
});

const STDIN_HINT =
  'pipe the messages in (e.g. `facectl threads replace-messages thr_123 - < messages.json`), or use --file PATH';

async function readMessages(ctx: Context, threadId: string, file: string | undefined, input: string | undefined) {
  // `replace-messages -` (the thread id left out): the - is no thread id, and no input is missing.
  if (threadId === '-' && input === undefined) {
    throw new UsageError("missing required argument 'thread_id' (the thread id comes before -)", {
      hint: 'usage: facectl threads replace-messages [flags] <thread_id> [input]',
    });
  }
  if (input !== undefined && input !== '-') {
    throw new UsageError(`unexpected argument ${JSON.stringify(input)}`, {
      hint: `to read a file, use ${flagAndValue('--file', input)}`,
    });
  }
  if (input === '-' && file !== undefined) throw new UsageError('give only one of --file and - (standard input)');
  const path = file ?? input;
  if (path === undefined) {
    throw new UsageError('no messages given', { hint: 'give --file PATH, or - to read standard input' });
  }
  const [{ parseJson }, { validateMessageList }, { readSourceText, resolveSource }] = await Promise.all([
    import('../../input/json.js'),
    import('../../input/messages.js'),
    import('../../input/source.js'),
  ]);
  const source = await resolveSource(ctx, path, STDIN_HINT);
  const value = parseJson(await readSourceText(source), { source: source.name });
  const command = `facectl threads replace-messages ${shellWord(threadId)} -`;
  // The conversion of this very input.
  const convert = (filter: string) =>
    path === '-'
      ? `convert them by piping the same input through \`${jqCommand(filter, '-')}\` into \`${command}\``
      : `convert them with \`${jqCommand(filter, path)} | ${command}\``;
  return { threadId, messages: validateMessageList(value, source.name, convert) };
}

export async function runReplaceMessages(ctx: Context, opts: { threadId: string; messages: ThreadMessage[] }) {
  const { replaceThreadMessages } = await import('../../contract/threads.js');
  const thread = await send(ctx, replaceThreadMessages, {
    params: { thread_id: opts.threadId },
    body: { messages: opts.messages.map((m) => ({ ...m })) },
  });
  const written = `the messages were replaced all the same (\`facectl threads get ${thread.thread_id}\`)`;
  ctx.out.record(thread, THREAD_FIELDS, written);
  ctx.out.success(
    `Replaced the messages of ${opts.threadId}: ${thread.message_count ?? opts.messages.length} now, ` +
      `${thread.messages_archived ?? 0} archived`,
  );
  return thread;
}

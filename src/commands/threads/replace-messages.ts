import * as z from 'zod';
import type { Context } from '../../context.js';
import { replaceThreadMessages, type Thread } from '../../contract/threads.js';
import { UsageError } from '../../errors.js';
import { parseJson } from '../../input/json.js';
import { type ThreadMessage, validateMessageList } from '../../input/messages.js';
import { requireArgument } from '../../input/options.js';
import { readSourceText, resolveSource } from '../../input/source.js';
import { flagAndValue, parseOptions, type RequestContext, send } from '../kit.js';
import { THREAD_FIELDS } from './fields.js';

/**
 * `facectl threads replace-messages <thread_id> (--file PATH | -)`: replaces every message of the
 * thread (the old ones are archived). The list is `[{role, content, from}]` or `{"messages": [...]}`,
 * checked element by element before anything is sent.
 */

export interface ReplaceMessagesOptions {
  threadId: string;
  messages: ThreadMessage[];
}

const optionsSchema = z.object({ file: z.string().optional() });

export const STDIN_HINT =
  'pipe the messages in (e.g. `facectl threads replace-messages thr_123 - < messages.json`), or use --file PATH';

export async function resolveReplaceMessagesOptions(
  ctx: Context,
  raw: Record<string, unknown>,
  threadId: string,
  input: string | undefined,
): Promise<ReplaceMessagesOptions> {
  const flags = parseOptions(optionsSchema, raw);
  const id = requireArgument('thread_id', threadId);
  if (input !== undefined && input !== '-') {
    throw new UsageError(`unexpected argument ${JSON.stringify(input)}`, {
      hint: `to read a file, use ${flagAndValue('--file', input)}`,
    });
  }
  if (input === '-' && flags.file !== undefined) throw new UsageError('give only one of --file and - (standard input)');
  const path = flags.file ?? input;
  if (path === undefined) {
    throw new UsageError('no messages given', { hint: 'give --file PATH, or - to read standard input' });
  }
  const source = await resolveSource(ctx, path, STDIN_HINT);
  const value = parseJson(await readSourceText(source), { source: source.name });
  return { threadId: id, messages: validateMessageList(value, source.name) };
}

export async function replaceMessagesAction(
  ctx: Context,
  raw: Record<string, unknown>,
  threadId: string,
  input?: string,
): Promise<void> {
  await runReplaceMessages(ctx, await resolveReplaceMessagesOptions(ctx, raw, threadId, input));
}

export async function runReplaceMessages(ctx: RequestContext, opts: ReplaceMessagesOptions): Promise<Thread> {
  const thread = await send(ctx, replaceThreadMessages, {
    params: { thread_id: opts.threadId },
    body: { messages: opts.messages.map((m) => ({ ...m })) },
  });
  ctx.out.record(thread, THREAD_FIELDS);
  ctx.out.success(
    `Replaced the messages of ${opts.threadId}: ${thread.message_count ?? opts.messages.length} now, ` +
      `${thread.messages_archived ?? 0} archived`,
  );
  return thread;
}

import type { Context } from '../../context.js';
import { getThread, type Thread } from '../../contract/threads.js';
import { requireArgument } from '../../input/arguments.js';
import { THREAD_FIELDS } from './fields.js';

/** `facectl threads get <thread_id>` (an extension endpoint of the local service). */

export async function getThreadAction(ctx: Context, _raw: Record<string, unknown>, threadId: string): Promise<void> {
  await runGetThread(ctx, { threadId: requireArgument('thread_id', threadId) });
}

export async function runGetThread(ctx: Context, opts: { threadId: string }): Promise<Thread> {
  const api = await ctx.api();
  const thread = await api.call(getThread, { params: { thread_id: opts.threadId } }, { signal: ctx.signal });
  ctx.out.record(thread, THREAD_FIELDS);
  // --json prints one document (messages included) and piped output stays one record; a terminal also shows the messages.
  if (ctx.io.stdoutIsTTY && !ctx.out.json && thread.messages && thread.messages.length > 0) {
    ctx.out.text('\n');
    ctx.out.list(thread.messages, [
      { header: 'role', value: (m) => m.role },
      { header: 'from', value: (m) => m.name },
      { header: 'content', value: (m) => m.content },
    ]);
  }
  return thread;
}

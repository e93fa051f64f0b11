import type { Context } from '../../context.js';
import { getThread, type Thread } from '../../contract/threads.js';
import { requireArgument } from '../../input/arguments.js';
import { type RequestContext, send } from '../kit.js';
import { THREAD_FIELDS } from './fields.js';

/** `facectl threads get <thread_id>` (an extension endpoint of the local service). */

/** The terminal check (io) decides whether the messages are listed too. */
type ThreadContext = RequestContext & Pick<Context, 'io'>;

export async function getThreadAction(
  ctx: ThreadContext,
  _raw: Record<string, unknown>,
  threadId: string,
): Promise<Thread> {
  const thread = await send(ctx, getThread, { params: { thread_id: requireArgument('thread_id', threadId) } });
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

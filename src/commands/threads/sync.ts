import { getThread, syncThread, type Thread } from '../../contract/threads.js';
import { requireArgument } from '../../input/options.js';
import { parseWaitFlags, syncAndShow, type WaitContext } from '../docs/wait-ready.js';
import { type RequestContext, send } from '../kit.js';
import { THREAD_FIELDS } from './fields.js';

/**
 * `facectl threads sync <thread_id> [--wait]` (an extension endpoint): charges the thread's
 * token_count to its billing source and starts preparation; --wait follows it until ready.
 */
export async function syncThreadAction(
  ctx: RequestContext & WaitContext,
  raw: Record<string, unknown>,
  threadId: string,
): Promise<Thread> {
  const params = { thread_id: requireArgument('thread_id', threadId) };
  return syncAndShow(ctx, parseWaitFlags(raw), THREAD_FIELDS, {
    kind: 'thread',
    id: params.thread_id,
    sync: () => send(ctx, syncThread, { params }),
    fetch: () => send(ctx, getThread, { params }),
  });
}

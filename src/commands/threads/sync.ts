import { getThread, syncThread, type Thread } from '../../contract/threads.js';
import { requireArgument } from '../../input/options.js';
import { parseWaitFlags, syncAndShow, type WaitContext, type WaitFlags } from '../docs/wait-ready.js';
import { type RequestContext, send } from '../kit.js';
import { THREAD_FIELDS } from './fields.js';

/**
 * `facectl threads sync <thread_id> [--wait]` (an extension endpoint): charges the thread's
 * token_count to its billing source and starts preparation; --wait follows it until ready.
 */

export type SyncThreadOptions = WaitFlags & { threadId: string };

export async function syncThreadAction(
  ctx: RequestContext & WaitContext,
  raw: Record<string, unknown>,
  threadId: string,
): Promise<void> {
  await runSyncThread(ctx, { threadId: requireArgument('thread_id', threadId), ...parseWaitFlags(raw) });
}

export async function runSyncThread(ctx: RequestContext & WaitContext, opts: SyncThreadOptions): Promise<Thread> {
  const params = { thread_id: opts.threadId };
  return syncAndShow(ctx, opts, THREAD_FIELDS, {
    kind: 'thread',
    id: opts.threadId,
    sync: () => send(ctx, syncThread, { params }),
    fetch: () => send(ctx, getThread, { params }),
  });
}

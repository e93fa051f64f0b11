import type { Context } from '../../context.js';
import { getThread, syncThread, type Thread } from '../../contract/threads.js';
import { requireArgument } from '../../input/options.js';
import { parseWaitFlags, waitUntilReady } from '../docs/wait-ready.js';
import { THREAD_FIELDS } from './fields.js';

/**
 * `facectl threads sync <thread_id> [--wait]` (an extension endpoint): charges the thread's
 * token_count to its billing source and starts preparation; --wait follows it until ready.
 */

export interface SyncThreadOptions {
  threadId: string;
  wait: boolean;
  timeoutSeconds: number;
}

export function parseSyncThreadOptions(raw: Record<string, unknown>, threadId: string): SyncThreadOptions {
  return { threadId: requireArgument('thread_id', threadId), ...parseWaitFlags(raw) };
}

export async function syncThreadAction(ctx: Context, raw: Record<string, unknown>, threadId: string): Promise<void> {
  await runSyncThread(ctx, parseSyncThreadOptions(raw, threadId));
}

export async function runSyncThread(ctx: Context, opts: SyncThreadOptions): Promise<Thread> {
  const api = await ctx.api();
  const params = { thread_id: opts.threadId };
  let thread = await api.call(syncThread, { params }, { signal: ctx.signal });
  ctx.out.success(`Synced ${opts.threadId} (token_count ${thread.token_count ?? 0})`);
  if (opts.wait) {
    thread = await waitUntilReady(ctx, {
      what: `thread ${opts.threadId}`,
      showCommand: `facectl threads get ${opts.threadId}`,
      initial: thread,
      fetch: () => api.call(getThread, { params }, { signal: ctx.signal }),
      timeoutSeconds: opts.timeoutSeconds,
    });
  }
  ctx.out.record(thread, THREAD_FIELDS);
  return thread;
}

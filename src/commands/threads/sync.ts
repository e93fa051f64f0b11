import { syncAndShow, WAIT_FLAGS, waitFlags } from '../docs/wait-ready.js';
import { requireArgument, send, verb, withExtensionNote } from '../kit.js';
import { THREAD_FIELDS } from './fields.js';

/**
 * `facectl threads sync <thread_id> [--wait]` (an extension endpoint): charges the thread's
 * token_count to its billing source and starts preparation; --wait follows it until ready.
 */
export default verb({
  description: withExtensionNote(
    'Sync a thread: its token_count is charged to its billing source and preparation starts.',
  ),
  args: [['<thread_id>', 'the thread id (thr_...)']],
  flags: WAIT_FLAGS,
  examples: [
    'facectl threads sync thr_4kP9x',
    'facectl threads sync thr_4kP9x --wait --timeout 60',
    'facectl threads sync thr_4kP9x --wait --json --no-input | jq .prepare_status',
  ],
  async run(ctx, given, threadId) {
    const { getThread, syncThread } = await import('../../contract/threads.js');
    const params = { thread_id: requireArgument('thread_id', threadId) };
    return syncAndShow(ctx, waitFlags(given), THREAD_FIELDS, {
      kind: 'thread',
      id: params.thread_id,
      sync: () => send(ctx, syncThread, { params }),
      fetch: () => send(ctx, getThread, { params }),
    });
  },
});

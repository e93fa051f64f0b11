import type { Lenient } from '../../api/answers.js';
import type { Column } from '../../context.js';
import type { Thread } from '../../contract/threads.js';
import { chunks, ofLimit } from '../docs/fields.js';
import { fieldColumns, requireArgument, send, verb, withExtensionNote } from '../kit.js';

export default verb({
  description: withExtensionNote(
    'Show a thread with its messages: its fields, then the messages (a table on a terminal; piped, a ' +
      '`field<TAB>value` line per field, a blank line, then a `role<TAB>from<TAB>content` line per message).',
  ),
  args: [['<thread_id>', 'the thread id (thr_...)']],
  examples: ['facectl threads get thr_4kP9x', 'facectl threads get thr_4kP9x --json | jq .messages'],
  async run(ctx, _flags, threadId) {
    const { getThread } = await import('../../contract/threads.js');
    const thread = await send(ctx, getThread, { params: { thread_id: requireArgument('thread_id', threadId) } });
    ctx.out.record(thread, THREAD_FIELDS);
    // --json prints one document (messages included); otherwise the messages follow the fields after a blank line.
    if (!ctx.out.json && thread.messages && thread.messages.length > 0) {
      ctx.out.text('\n');
      ctx.out.list(thread.messages, [
        { header: 'role', value: (m) => m.role },
        { header: 'from', value: (m) => m.name },
        { header: 'content', value: (m) => m.content },
      ]);
    }
    return thread;
  },
});

type ThreadAnswer = Lenient<Thread>;

export const THREAD_FIELDS: Column<ThreadAnswer>[] = [
  ...fieldColumns<ThreadAnswer>('thread_id', 'alias', 'label'),
  { header: 'interviewer_billing_source', value: (t) => t.interviewer_billing_source ?? 'automatic' },
  ...fieldColumns<ThreadAnswer>('message_count', 'messages_archived', 'token_count', 'synced', 'prepare_status'),
  { header: 'chunks', value: chunks },
  { header: 'tokens_used', value: (t) => ofLimit(t.tokens_used, t.tokens_limit) },
  ...fieldColumns<ThreadAnswer>('created_at', 'updated_at'),
];

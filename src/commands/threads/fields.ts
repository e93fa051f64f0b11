import type { Column } from '../../context.js';
import type { Thread } from '../../contract/threads.js';

/** The thread fields shown on a terminal or as tab-separated lines; --json prints the whole object. */
export const THREAD_FIELDS: Column<Thread>[] = [
  { header: 'thread_id', value: (t) => t.thread_id },
  { header: 'alias', value: (t) => t.alias },
  { header: 'label', value: (t) => t.label },
  { header: 'interviewer_billing_source', value: (t) => t.interviewer_billing_source ?? 'automatic' },
  { header: 'message_count', value: (t) => t.message_count },
  { header: 'messages_archived', value: (t) => t.messages_archived },
  { header: 'token_count', value: (t) => t.token_count },
  { header: 'synced', value: (t) => t.synced },
  { header: 'prepare_status', value: (t) => t.prepare_status },
  {
    header: 'chunks',
    value: (t) =>
      t.chunks_total === null || t.chunks_total === undefined ? null : `${t.chunks_completed ?? 0}/${t.chunks_total}`,
  },
  {
    header: 'tokens_used',
    value: (t) => (t.tokens_used === undefined ? null : `${t.tokens_used}/${t.tokens_limit ?? 0}`),
  },
  { header: 'created_at', value: (t) => t.created_at },
  { header: 'updated_at', value: (t) => t.updated_at },
];

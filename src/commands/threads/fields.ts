import type { Column } from '../../context.js';
import type { Thread } from '../../contract/threads.js';
import { chunks } from '../docs/fields.js';
import { fieldColumns } from '../kit.js';

/** The thread fields shown on a terminal or as tab-separated lines; --json prints the whole object. */
export const THREAD_FIELDS: Column<Thread>[] = [
  ...fieldColumns<Thread>('thread_id', 'alias', 'label'),
  { header: 'interviewer_billing_source', value: (t) => t.interviewer_billing_source ?? 'automatic' },
  ...fieldColumns<Thread>('message_count', 'messages_archived', 'token_count', 'synced', 'prepare_status'),
  { header: 'chunks', value: chunks },
  {
    header: 'tokens_used',
    value: (t) => (t.tokens_used === undefined ? null : `${t.tokens_used}/${t.tokens_limit ?? 0}`),
  },
  ...fieldColumns<Thread>('created_at', 'updated_at'),
];

import type { Lenient } from '../../api/answers.js';
import type { Column } from '../../context.js';
import type { Thread } from '../../contract/threads.js';
import { chunks, ofLimit } from '../docs/fields.js';
import { fieldColumns } from '../kit.js';

/** A thread as commands read it: any field but the ones a route needs may be absent (api/answers.ts). */
export type ThreadAnswer = Lenient<Thread>;

/** The thread fields shown on a terminal or as tab-separated lines; --json prints the whole object. */
export const THREAD_FIELDS: Column<ThreadAnswer>[] = [
  ...fieldColumns<ThreadAnswer>('thread_id', 'alias', 'label'),
  { header: 'interviewer_billing_source', value: (t) => t.interviewer_billing_source ?? 'automatic' },
  ...fieldColumns<ThreadAnswer>('message_count', 'messages_archived', 'token_count', 'synced', 'prepare_status'),
  { header: 'chunks', value: chunks },
  { header: 'tokens_used', value: (t) => ofLimit(t.tokens_used, t.tokens_limit) },
  ...fieldColumns<ThreadAnswer>('created_at', 'updated_at'),
];

import type { Lenient } from '../../api/answers.js';
import type { Column, Context } from '../../context.js';
import { ABSENT } from '../../io/output.js';
import type { Document } from '../../contract/documents.js';
import { fieldColumns } from '../kit.js';

export type DocumentAnswer = Lenient<Document>;

/** `used/limit`; absent when `used` is, and `—` for a limit the answer did not give. */
export const ofLimit = (used: number | null | undefined, limit: number | null | undefined): string | null =>
  used === null || used === undefined ? null : `${used}/${limit ?? ABSENT}`;

/** Preparation's progress, `completed/total`, once the service has split the item into chunks. */
export const chunks = (item: { chunks_completed?: number | null; chunks_total?: number | null }): string | null =>
  item.chunks_total === null || item.chunks_total === undefined
    ? null
    : `${item.chunks_completed ?? 0}/${item.chunks_total}`;

/** The fields shown on a terminal or piped (not the content: it can be megabytes); --json prints the whole object. */
export const DOCUMENT_FIELDS: Column<DocumentAnswer>[] = [
  ...fieldColumns<DocumentAnswer>('document_id', 'alias', 'label', 'type', 'source'),
  ...fieldColumns<DocumentAnswer>('version', 'token_count', 'synced', 'prepare_status'),
  { header: 'chunks', value: chunks },
  { header: 'tokens_used', value: (d) => ofLimit(d.tokens_used, d.tokens_limit) },
  ...fieldColumns<DocumentAnswer>('created_at', 'updated_at'),
];

/** Submitting or importing only counts tokens; the spec says the charge is made at sync. Say so. */
export function notePreview(ctx: Pick<Context, 'out'>, document: DocumentAnswer & { document_id: string }): void {
  if (document.synced !== false || typeof document.token_count !== 'number') return;
  ctx.out.info(
    `token_count ${document.token_count} is a preview: nothing is charged until sync ` +
      `(\`facectl docs sync ${document.document_id}\`).`,
  );
}

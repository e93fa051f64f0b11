import type { Column, Context } from '../../context.js';
import type { Document } from '../../contract/documents.js';
import { fieldColumns } from '../kit.js';

/**
 * The document fields shown on a terminal or as tab-separated lines (the content itself is left out:
 * it can be megabytes); --json prints the whole object as the service returned it.
 */
export const DOCUMENT_FIELDS: Column<Document>[] = [
  ...fieldColumns<Document>('document_id', 'alias', 'label', 'type', 'source'),
  ...fieldColumns<Document>('version', 'token_count', 'synced', 'prepare_status'),
  { header: 'chunks', value: chunks },
  { header: 'tokens_used', value: (d) => `${d.tokens_used}/${d.tokens_limit}` },
  ...fieldColumns<Document>('created_at', 'updated_at'),
];

/** Preparation's progress, `completed/total`, once the service has split the item into chunks. */
export function chunks(item: { chunks_completed?: number | null; chunks_total?: number | null }): string | null {
  if (item.chunks_total === null || item.chunks_total === undefined) return null;
  return `${item.chunks_completed ?? 0}/${item.chunks_total}`;
}

/** Submitting or importing only counts tokens; the spec says the charge is made at sync. Say so. */
export function notePreview(ctx: Pick<Context, 'out'>, document: Document): void {
  if (document.synced) return;
  ctx.out.info(
    `token_count ${document.token_count} is a preview: nothing is charged until sync ` +
      `(\`facectl docs sync ${document.document_id}\`).`,
  );
}

import type { Column, Context } from '../../context.js';
import type { Document } from '../../contract/documents.js';

/**
 * The document fields shown on a terminal or as tab-separated lines (the content itself is left out:
 * it can be megabytes); --json prints the whole object as the service returned it.
 */
export const DOCUMENT_FIELDS: Column<Document>[] = [
  { header: 'document_id', value: (d) => d.document_id },
  { header: 'alias', value: (d) => d.alias },
  { header: 'label', value: (d) => d.label },
  { header: 'type', value: (d) => d.type },
  { header: 'source', value: (d) => d.source },
  { header: 'version', value: (d) => d.version },
  { header: 'token_count', value: (d) => d.token_count },
  { header: 'synced', value: (d) => d.synced },
  { header: 'prepare_status', value: (d) => d.prepare_status },
  { header: 'chunks', value: (d) => chunks(d) },
  { header: 'tokens_used', value: (d) => `${d.tokens_used}/${d.tokens_limit}` },
  { header: 'created_at', value: (d) => d.created_at },
  { header: 'updated_at', value: (d) => d.updated_at },
];

function chunks(item: { chunks_completed?: number | null; chunks_total?: number | null }): string | null {
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

import type { Context } from '../../context.js';
import { type Document, getDocument } from '../../contract/documents.js';
import { requireArgument } from '../../input/arguments.js';
import { DOCUMENT_FIELDS } from './fields.js';

/** `facectl docs get <document_id>` (an extension endpoint of the local service). */

export async function getDocumentAction(
  ctx: Context,
  _raw: Record<string, unknown>,
  documentId: string,
): Promise<void> {
  await runGetDocument(ctx, { documentId: requireArgument('document_id', documentId) });
}

export async function runGetDocument(ctx: Context, opts: { documentId: string }): Promise<Document> {
  const api = await ctx.api();
  const document = await api.call(getDocument, { params: { document_id: opts.documentId } }, { signal: ctx.signal });
  ctx.out.record(document, DOCUMENT_FIELDS);
  return document;
}

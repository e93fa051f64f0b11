import { type Document, getDocument } from '../../contract/documents.js';
import { requireArgument } from '../../input/arguments.js';
import { type RequestContext, send } from '../kit.js';
import { DOCUMENT_FIELDS } from './fields.js';

/** `facectl docs get <document_id>` (an extension endpoint of the local service). */
export async function getDocumentAction(
  ctx: RequestContext,
  _raw: Record<string, unknown>,
  documentId: string,
): Promise<Document> {
  const document = await send(ctx, getDocument, {
    params: { document_id: requireArgument('document_id', documentId) },
  });
  ctx.out.record(document, DOCUMENT_FIELDS);
  return document;
}

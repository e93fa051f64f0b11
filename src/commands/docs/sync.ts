import { type Document, getDocument, syncDocument } from '../../contract/documents.js';
import { requireArgument } from '../../input/options.js';
import { type RequestContext, send } from '../kit.js';
import { DOCUMENT_FIELDS } from './fields.js';
import { parseWaitFlags, syncAndShow, type WaitContext } from './wait-ready.js';

/**
 * `facectl docs sync <document_id> [--wait]` (an extension endpoint): charges the document's
 * token_count to the billing source and starts preparation; --wait follows it until ready.
 */
export async function syncDocumentAction(
  ctx: RequestContext & WaitContext,
  raw: Record<string, unknown>,
  documentId: string,
): Promise<Document> {
  const params = { document_id: requireArgument('document_id', documentId) };
  return syncAndShow(ctx, parseWaitFlags(raw), DOCUMENT_FIELDS, {
    kind: 'document',
    id: params.document_id,
    sync: () => send(ctx, syncDocument, { params }),
    fetch: () => send(ctx, getDocument, { params }),
  });
}

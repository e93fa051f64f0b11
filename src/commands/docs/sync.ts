import { type Document, getDocument, syncDocument } from '../../contract/documents.js';
import { requireArgument } from '../../input/options.js';
import { type RequestContext, send } from '../kit.js';
import { DOCUMENT_FIELDS } from './fields.js';
import { parseWaitFlags, syncAndShow, type WaitContext, type WaitFlags } from './wait-ready.js';

/**
 * `facectl docs sync <document_id> [--wait]` (an extension endpoint): charges the document's
 * token_count to the billing source and starts preparation; --wait follows it until ready.
 */

export type SyncDocumentOptions = WaitFlags & { documentId: string };

export async function syncDocumentAction(
  ctx: RequestContext & WaitContext,
  raw: Record<string, unknown>,
  documentId: string,
): Promise<void> {
  await runSyncDocument(ctx, { documentId: requireArgument('document_id', documentId), ...parseWaitFlags(raw) });
}

export async function runSyncDocument(ctx: RequestContext & WaitContext, opts: SyncDocumentOptions): Promise<Document> {
  const params = { document_id: opts.documentId };
  return syncAndShow(ctx, opts, DOCUMENT_FIELDS, {
    kind: 'document',
    id: opts.documentId,
    sync: () => send(ctx, syncDocument, { params }),
    fetch: () => send(ctx, getDocument, { params }),
  });
}

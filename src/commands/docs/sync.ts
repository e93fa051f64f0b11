import type { Context } from '../../context.js';
import { type Document, getDocument, syncDocument } from '../../contract/documents.js';
import { requireArgument } from '../../input/options.js';
import { DOCUMENT_FIELDS } from './fields.js';
import { parseWaitFlags, waitUntilReady } from './wait-ready.js';

/**
 * `facectl docs sync <document_id> [--wait]` (an extension endpoint): charges the document's
 * token_count to the billing source and starts preparation; --wait follows it until ready.
 */

export interface SyncDocumentOptions {
  documentId: string;
  wait: boolean;
  timeoutSeconds: number;
}

export function parseSyncDocumentOptions(raw: Record<string, unknown>, documentId: string): SyncDocumentOptions {
  return { documentId: requireArgument('document_id', documentId), ...parseWaitFlags(raw) };
}

export async function syncDocumentAction(
  ctx: Context,
  raw: Record<string, unknown>,
  documentId: string,
): Promise<void> {
  await runSyncDocument(ctx, parseSyncDocumentOptions(raw, documentId));
}

export async function runSyncDocument(ctx: Context, opts: SyncDocumentOptions): Promise<Document> {
  const api = await ctx.api();
  const params = { document_id: opts.documentId };
  let document = await api.call(syncDocument, { params }, { signal: ctx.signal });
  ctx.out.success(`Synced ${document.document_id} (token_count ${document.token_count})`);
  if (opts.wait) {
    document = await waitUntilReady(ctx, {
      what: `document ${document.document_id}`,
      showCommand: `facectl docs get ${document.document_id}`,
      initial: document,
      fetch: () => api.call(getDocument, { params }, { signal: ctx.signal }),
      timeoutSeconds: opts.timeoutSeconds,
    });
  }
  ctx.out.record(document, DOCUMENT_FIELDS);
  return document;
}

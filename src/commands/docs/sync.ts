import { requireArgument, send, verb, withExtensionNote } from '../kit.js';
import { DOCUMENT_FIELDS } from './fields.js';
import { syncAndShow, WAIT_FLAGS, waitFlags } from './wait-ready.js';

/**
 * `facectl docs sync <document_id> [--wait]` (an extension endpoint): charges the document's
 * token_count to the billing source and starts preparation; --wait follows it until ready.
 */
export default verb({
  description: withExtensionNote(
    'Sync a document: its token_count is charged to the billing source and preparation starts.',
  ),
  args: [['<document_id>', 'the document id (doc_...)']],
  flags: WAIT_FLAGS,
  examples: [
    'facectl docs sync doc_7Hc2Lq',
    'facectl docs sync doc_7Hc2Lq --wait --timeout 60',
    'facectl docs sync doc_7Hc2Lq --wait --json --no-input | jq .prepare_status',
  ],
  async run(ctx, given, documentId) {
    const { getDocument, syncDocument } = await import('../../contract/documents.js');
    const params = { document_id: requireArgument('document_id', documentId) };
    return syncAndShow(ctx, waitFlags(given), DOCUMENT_FIELDS, {
      kind: 'document',
      id: params.document_id,
      sync: () => send(ctx, syncDocument, { params }),
      fetch: () => send(ctx, getDocument, { params }),
    });
  },
});

import { requireArgument, send, verb, withExtensionNote } from '../kit.js';
import { DOCUMENT_FIELDS } from './fields.js';

export default verb({
  description: withExtensionNote('Show a document.'),
  args: [['<document_id>', 'the document id (doc_...)']],
  examples: ['facectl docs get doc_7Hc2Lq', 'facectl docs get doc_7Hc2Lq --json | jq .prepare_status'],
  async run(ctx, _flags, documentId) {
    const { getDocument } = await import('../../contract/documents.js');
    const document = await send(ctx, getDocument, {
      params: { document_id: requireArgument('document_id', documentId) },
    });
    ctx.out.record(document, DOCUMENT_FIELDS);
    return document;
  },
});

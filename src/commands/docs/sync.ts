import { DOCUMENT_FIELDS } from './fields.js';
import { syncVerb } from './wait-ready.js';

export default syncVerb('document', DOCUMENT_FIELDS, async () => {
  const { getDocument, syncDocument } = await import('../../contract/documents.js');
  return { sync: syncDocument, get: getDocument };
});

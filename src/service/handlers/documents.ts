import type { Document } from '../../contract/index.js';
import { type AuthInfo, ownItem, resolveFace } from '../auth.js';
import { markChanged, syncItem } from '../billing.js';
import { newId } from '../ids.js';
import type { DocumentRecord, FaceRecord } from '../records.js';
import type { Handler, PreparedHandler, ServiceCore } from '../service-core.js';
import { countTokens, WORKER_THRESHOLD } from '../tokens.js';
import { documentView } from '../views.js';

type NewDocument = Pick<
  DocumentRecord,
  'label' | 'source' | 'type' | 'perspective' | 'face_speaker' | 'content' | 'token_count'
>;

/**
 * A new document of `face` (submit and import), written out field by field in the table's column order:
 * a submit makes one per request, and an object spread from two others costs more than the rest.
 */
export function insertDocument(svc: ServiceCore, auth: AuthInfo, face: FaceRecord, fields: NewDocument): Document {
  const now = svc.clock.now().toISOString();
  const doc: DocumentRecord = {
    id: newId('doc'),
    user_id: auth.user.id,
    face_id: face.id,
    alias: face.alias,
    label: fields.label,
    source: fields.source,
    created_at: now,
    updated_at: now,
    token_count: fields.token_count,
    synced: false,
    sync_started_ms: null,
    synced_token_count: null,
    billing_source: null,
    type: fields.type,
    perspective: fields.perspective,
    face_speaker: fields.face_speaker,
    version: 1,
    content: fields.content,
  };
  // Under a fresh random id: no other request can name it before the commit, which writes it.
  svc.store.insertNew('documents', doc);
  return documentView(svc, doc, auth.user);
}

/** POST /v1/compile/documents: token_count is a BPE count of the content, a preview; nothing is charged. */
export const createDocument: PreparedHandler<'createDocument'> = {
  // A large text's face first: a document for a face that is not there is refused before it is counted
  // (seconds, in a worker). A small one is counted at once; run() looks its face up anyway.
  prepare: async ({ body, auth, svc }) => {
    if (body.content.length >= WORKER_THRESHOLD) resolveFace(svc.store, auth, body.alias);
    return { tokenCount: await countTokens(body.content, svc.stopping) };
  },
  run: ({ body, auth, svc, prepared }) => {
    const face = resolveFace(svc.store, auth, body.alias);
    const doc = insertDocument(svc, auth, face, {
      label: body.label,
      source: 'submit',
      type: 'document',
      perspective: body.perspective,
      face_speaker: null,
      content: body.content,
      token_count: prepared.tokenCount as number,
    });
    return { status: 201, body: doc };
  },
};

export const getDocument: Handler<'getDocument'> = ({ params, auth, svc }) => {
  const { item: doc } = ownItem(svc.store, auth, 'documents', params.document_id);
  return { status: 200, body: documentView(svc, doc, auth.user) };
};

/** PATCH /v1/compile/documents/{id}: a new version, to be synced again. */
export const editDocument: PreparedHandler<'editDocument'> = {
  prepare: async ({ params, body, auth, svc }) => {
    ownItem(svc.store, auth, 'documents', params.document_id);
    return { tokenCount: body.content === undefined ? undefined : await countTokens(body.content, svc.stopping) };
  },
  run: ({ params, body, auth, svc, prepared }) => {
    const { item: doc } = ownItem(svc.store, auth, 'documents', params.document_id);
    svc.idempotency.beforeDocumentEdit(doc);
    if (body.content !== undefined) {
      doc.content = body.content;
      doc.token_count = prepared.tokenCount as number;
    }
    if (body.label !== undefined) doc.label = body.label;
    doc.version += 1;
    markChanged(doc, svc.clock.now());
    svc.store.put('documents', doc);
    return { status: 200, body: documentView(svc, doc, auth.user) };
  },
};

export const syncDocument: Handler<'syncDocument'> = ({ params, auth, svc }) => {
  const { item: doc, face } = ownItem(svc.store, auth, 'documents', params.document_id);
  syncItem(svc, auth, 'documents', doc, face, null);
  return { status: 200, body: documentView(svc, doc, auth.user) };
};

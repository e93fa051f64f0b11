import type { AuthInfo } from './auth.js';
import { forbidden, notFound } from './errors.js';
import type { FaceRecord } from './records.js';
import type { Store } from './store.js';

/**
 * A face is named by its uid or its alias; an entry of allowed_face_ids matches either. The allow-list is
 * checked before existence, so a restricted key cannot probe for faces outside its list.
 */
export function faceAllowed(auth: AuthInfo, name: string, face: FaceRecord | undefined): boolean {
  const list = auth.key.allowed_face_ids;
  if (list === null) return true;
  return list.includes(name) || (face !== undefined && (list.includes(face.id) || list.includes(face.alias)));
}

const refuseFace = (name: string) =>
  forbidden('face_not_allowed', `this key may not use face ${name} (not in its allowed_face_ids)`);

/** The user's face named by uid or alias; 403 outside the key's allow-list, 404 when there is none. */
export function resolveFace(store: Store, auth: AuthInfo, name: string): FaceRecord {
  const face = store.faceOf(auth.user.id, name);
  if (!faceAllowed(auth, name, face)) throw refuseFace(name);
  if (!face) throw notFound('face_not_found', `no face ${name}`);
  return face;
}

/** A face whose default model is outside allowed_llm_models may not be created or synced with this key. */
export function requireModelAllowed(auth: AuthInfo, model: string | null | undefined): void {
  const list = auth.key.allowed_llm_models;
  if (list === null || model === null || model === undefined) return;
  if (!list.includes(model)) {
    throw forbidden('model_not_allowed', `this key may not use model ${model} (allowed: ${list.join(', ') || 'none'})`);
  }
}

/** A document or thread of the caller's with its face, which the key must be allowed to use; else a 404. */
export function ownItem<C extends 'documents' | 'threads'>(store: Store, auth: AuthInfo, collection: C, id: string) {
  const item = store.get(collection, id);
  const face = item ? store.get('faces', item.face_id) : undefined;
  if (!item || !face || item.user_id !== auth.user.id) {
    const what = collection === 'documents' ? 'document' : 'thread';
    throw notFound(`${what}_not_found`, `no ${what} ${id}`);
  }
  if (!faceAllowed(auth, face.alias, face)) throw refuseFace(face.alias);
  return { item, face };
}

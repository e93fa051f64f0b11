import { hash, timingSafeEqual } from 'node:crypto';
import type { Route } from '../contract/route.js';
import { forbidden, notFound, unauthorized } from './errors.js';
import { randomBase62 } from './ids.js';
import type { FaceRecord, KeyRecord, UserRecord } from './records.js';
import type { Store } from './store.js';

/**
 * API keys: `fcs_<8-char id>_<32 random base62 chars>`. Only the SHA-256 of the whole secret is
 * stored; a request's key is found by its embedded id and compared digest to digest in constant time.
 */

const KEY_PATTERN = /^fcs_([A-Za-z0-9]{8})_([A-Za-z0-9]{32})$/;

export function mintKey(store: Store) {
  for (;;) {
    const short = randomBase62(8);
    if (store.get('keys', `key_${short}`)) continue;
    const secret = `fcs_${short}_${randomBase62(32)}`;
    return { secret, id: `key_${short}`, hash: hash('sha256', secret), key_prefix: `fcs_${short}` };
  }
}

export type AuthInfo = { key: KeyRecord; user: UserRecord };

/** Resolves `Authorization: Bearer <key>`; anything missing, malformed, unknown or expired is a 401. */
export function authenticate(store: Store, header: string | undefined, now: Date): AuthInfo {
  if (!header) throw unauthorized('missing Authorization header; send Authorization: Bearer <API key>');
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  if (!match) throw unauthorized('the Authorization header must be Bearer <API key>');
  const secret = match[1] as string;
  const parts = KEY_PATTERN.exec(secret);
  const found = parts ? store.keyWithUser(`key_${parts[1]}`) : undefined;
  // Compare digests, so the time taken tells nothing about how much of the key was right.
  const presented = hash('sha256', secret, 'buffer');
  const expected = found ? Buffer.from(found.key.hash, 'hex') : presented;
  if (!found || !timingSafeEqual(presented, expected)) throw unauthorized(unknownKey(store, parts !== null));
  const { key } = found;
  if (key.expires_at !== null && Date.parse(key.expires_at) <= now.getTime()) {
    throw unauthorized(`API key ${key.key_prefix} expired at ${key.expires_at}`);
  }
  return found;
}

/**
 * Why a key can be unknown here: a serve without --data forgets every key when it stops. A key not of this
 * service's form (`ours` false, a mistyped one) was never one of its keys: no guess about earlier runs.
 */
function unknownKey(store: Store, ours: boolean): string {
  if (!ours) return 'invalid API key: not a key of this service';
  return store.persistent
    ? 'invalid API key: not a key of this service (its keys are kept in its --data file; a key printed by a ' +
        'facectl serve without --data, or with another --data file, is not known here)'
    : 'invalid API key: this facectl serve was started without --data, so it forgets its keys at each start ' +
        '(keys of an earlier run are gone); use a key this run printed, or keep state across starts with --data FILE';
}

/** Does one of `scopes` (v1:*, v1:<area>, v1:<area>:<action>) include `wanted` (same forms)? */
export function hasScope(scopes: readonly string[], wanted: string): boolean {
  return scopes.some(
    (granted) => granted === 'v1:*' || (wanted !== 'v1:*' && (wanted === granted || wanted.startsWith(`${granted}:`))),
  );
}

/** 403 `insufficient_scope` unless the key holds the route's scope. */
export function requireScope(auth: AuthInfo, route: Pick<Route, 'scope'>): void {
  if (route.scope === null) return;
  const wanted = `v1:${route.scope}`;
  if (!hasScope(auth.key.scopes, wanted)) {
    throw forbidden(
      'insufficient_scope',
      `this key lacks the scope ${wanted} (or v1:${route.scope.split(':')[0]}, or v1:*); it has ${auth.key.scopes.join(', ')}`,
    );
  }
}

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

import { faceAllowed, hasScope, mintKey } from '../auth.js';
import { forbidden } from '../errors.js';
import type { KeyRecord } from '../records.js';
import { apiKeyView, currentKeyView } from '../views.js';
import type { Handler } from '../service-core.js';

const DAY_MS = 24 * 60 * 60 * 1000;

const escalation = (detail: string) => forbidden('key_escalation', detail);

/** POST /v1/auth/api-keys: omitted or null fields inherit the parent key's; anything wider is 403 `key_escalation`. */
export const createApiKey: Handler<'createApiKey'> = ({ body, auth, svc }) => {
  const parent = auth.key;
  const now = svc.clock.now();

  const scopes = [...new Set(body.scopes ?? parent.scopes)];
  const wider = scopes.filter((s) => !hasScope(parent.scopes, s));
  if (wider.length > 0) {
    throw escalation(`scopes ${wider.join(', ')} are wider than this key's (${parent.scopes.join(', ')})`);
  }

  let expiresAt = parent.expires_at;
  if (body.expires_in_days != null) {
    const wanted = new Date(now.getTime() + body.expires_in_days * DAY_MS).toISOString();
    if (parent.expires_at !== null && Date.parse(wanted) > Date.parse(parent.expires_at)) {
      throw escalation(`expiry ${wanted} is later than this key's (${parent.expires_at})`);
    }
    expiresAt = wanted;
  }

  if (body.budget_usd != null && parent.budget_usd !== null && body.budget_usd > parent.budget_usd) {
    throw escalation(`budget_usd ${body.budget_usd} is larger than this key's (${parent.budget_usd})`);
  }

  if (body.allowed_face_ids != null && parent.allowed_face_ids !== null) {
    const outside = body.allowed_face_ids.filter(
      (name) => !faceAllowed(auth, name, svc.store.faceOf(auth.user.id, name)),
    );
    if (outside.length > 0) throw escalation(`allowed_face_ids ${outside.join(', ')} are outside this key's list`);
  }

  if (body.allowed_llm_models != null && parent.allowed_llm_models !== null) {
    const parentModels = parent.allowed_llm_models;
    const outside = body.allowed_llm_models.filter((m) => !parentModels.includes(m));
    if (outside.length > 0) throw escalation(`allowed_llm_models ${outside.join(', ')} are outside this key's list`);
  }

  const { secret, ...minted } = mintKey(svc.store);
  const record: KeyRecord = {
    ...minted,
    user_id: auth.user.id,
    parent_id: parent.id,
    bootstrap: false,
    name: body.name ?? null,
    created_at: now.toISOString(),
    expires_at: expiresAt,
    scopes,
    budget_usd: body.budget_usd ?? parent.budget_usd,
    spent_micro: 0,
    allowed_face_ids: body.allowed_face_ids ?? parent.allowed_face_ids,
    allowed_llm_models: body.allowed_llm_models ?? parent.allowed_llm_models,
  };
  svc.store.put('keys', record);
  return { status: 201, body: apiKeyView(record, secret), holdsSecret: true };
};

export const getCurrentApiKey: Handler<'getCurrentApiKey'> = ({ auth }) => ({
  status: 200,
  body: currentKeyView(auth.key, auth.user),
});

import type { ApiKey, CurrentApiKey, Document, Face, Thread } from '../contract/index.js';
import { chooseSource, quotaView } from './billing.js';
import { microToUsd } from './plans.js';
import type { DocumentRecord, FaceItem, FaceRecord, KeyRecord, ThreadRecord, UserRecord } from './records.js';
import type { ServiceCore } from './service-core.js';

function keyFields(key: KeyRecord) {
  return {
    id: key.id,
    name: key.name,
    created_at: key.created_at,
    expires_at: key.expires_at,
    key_prefix: key.key_prefix,
    budget_usd: key.budget_usd,
    spent_usd: microToUsd(key.spent_micro),
    allowed_face_ids: key.allowed_face_ids,
    allowed_llm_models: key.allowed_llm_models,
  };
}

/** The creation response: the only body that ever holds the secret. */
export function apiKeyView(key: KeyRecord, secret: string): ApiKey {
  return { key: secret, ...keyFields(key), scopes: key.scopes };
}

export function currentKeyView(key: KeyRecord, user: UserRecord): CurrentApiKey {
  return { ...keyFields(key), scopes: key.scopes, plan: user.plan, user_id: user.id };
}

export function faceView(face: FaceRecord): Face {
  return {
    alias: face.alias,
    created: face.created,
    owned_by: face.user_id,
    uid: face.id,
    object: 'face',
    name: face.name,
    basic_facts: face.basic_facts,
    default_tools: face.default_tools,
    default_model: face.default_model,
    formula: face.formula,
    profile_token_count: 0,
    total_tokens_saved: 0,
    component_counts: { alpha: 0, beta: 0, delta: 0, epsilon: 0 },
    warnings: [],
  };
}

/** Written out field by field (no spreads): every document answer builds one. */
export function documentView(svc: ServiceCore, doc: DocumentRecord, user: UserRecord): Document {
  const now = svc.clock.now();
  const quota = quotaView(user, now);
  const prepared = preparation(doc, now.getTime());
  return {
    document_id: doc.id,
    alias: doc.alias,
    label: doc.label,
    source: doc.source,
    version: doc.version,
    content: doc.content,
    token_count: doc.token_count,
    tokens_used: quota.tokens_used,
    tokens_limit: quota.tokens_limit,
    synced: doc.synced,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    prepare_status: prepared?.prepare_status ?? null,
    chunks_total: prepared?.chunks_total ?? null,
    chunks_completed: prepared?.chunks_completed ?? null,
    current_counts: prepared?.current_counts ?? {},
    type: doc.type,
    perspective: doc.perspective,
    face_speaker: doc.face_speaker,
    billing_source: doc.billing_source,
  };
}

export function threadView(svc: ServiceCore, thread: ThreadRecord, user: UserRecord): Thread {
  const now = svc.clock.now();
  return {
    thread_id: thread.id,
    label: thread.label,
    alias: thread.alias,
    source: thread.source,
    messages: thread.messages.map((m) => ({ role: m.role, content: m.content, name: m.from })),
    message_count: thread.messages.length,
    messages_archived: thread.messages_archived,
    synced: thread.synced,
    token_count: thread.token_count,
    ...quotaView(user, now),
    created_at: thread.created_at,
    updated_at: thread.updated_at,
    interviewer_billing_source: threadSource(svc, thread, user, now),
    // The spec types a thread's chunk counts as integers (a document's are nullable): before its
    // first sync a thread is `pending` with 0 of 0 chunks.
    ...(preparation(thread, now.getTime()) ?? {
      prepare_status: 'pending',
      chunks_total: 0,
      chunks_completed: 0,
      current_counts: {},
    }),
  };
}

// The simulated preparation after a sync, from the clock, no timers (docs/local-service-choices.md, Resources).
const QUEUED_MS = 200;
const CHUNK_MS = 100;
const CHUNK_TOKENS = 1000;

function preparation(item: FaceItem, nowMs: number) {
  if (item.sync_started_ms === null || item.synced_token_count === null) return null;
  const tokens = item.synced_token_count;
  const total = Math.max(1, Math.ceil(tokens / CHUNK_TOKENS));
  const elapsed = nowMs - item.sync_started_ms;
  const completed = elapsed < QUEUED_MS ? 0 : Math.min(total, Math.floor((elapsed - QUEUED_MS) / CHUNK_MS));
  const status = elapsed < QUEUED_MS ? 'queued' : completed >= total ? 'ready' : 'processing';
  return {
    prepare_status: status,
    chunks_total: total,
    chunks_completed: completed,
    current_counts: { chunks: completed, tokens: Math.min(tokens, completed * CHUNK_TOKENS) } as Record<string, number>,
  };
}

/** A thread's interviewer_billing_source: given, last used, or what would pay now (credits when nothing could). */
function threadSource(svc: ServiceCore, thread: ThreadRecord, user: UserRecord, now: Date) {
  if (thread.override) return thread.override;
  if (thread.billing_source) return thread.billing_source;
  try {
    return chooseSource(svc, now, user, thread.token_count, null);
  } catch {
    return 'credits';
  }
}

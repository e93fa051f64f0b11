import type { BILLING_SOURCES } from '../contract/common.js';

export type BillingSource = (typeof BILLING_SOURCES)[number];

/** The records of the local service, one table each (schema.ts). Money in integer micro-dollars: sums never drift. */

export type PlanName = 'free' | 'standard' | 'pro' | 'connect';

export interface UserRecord {
  id: string;
  plan: PlanName;
  /** The account name the consent page shows. */
  account: string;
  credits_micro: number;
  /** Calendar month (UTC, `YYYY-MM`) that quota_used counts. */
  quota_month: string;
  quota_used: number;
  created_at: string;
}

export interface KeyRecord {
  /** `key_<8 chars>`; the same 8 chars are embedded in the secret, so lookup needs no scan. */
  id: string;
  user_id: string;
  /** The key that created this one; null for bootstrap keys. */
  parent_id: string | null;
  bootstrap: boolean;
  name: string | null;
  /** SHA-256 of the full secret, hex. The secret itself is never stored. */
  hash: string;
  key_prefix: string;
  created_at: string;
  expires_at: string | null;
  scopes: string[];
  budget_usd: number | null;
  /** What this key and the keys created from it have synced, in micro-dollars. */
  spent_micro: number;
  allowed_face_ids: string[] | null;
  allowed_llm_models: string[] | null;
}

export interface FaceRecord {
  id: string;
  user_id: string;
  alias: string;
  name: string;
  basic_facts: Record<string, unknown>;
  default_tools: string[] | null;
  default_model: string | null;
  formula: string | null;
  /** Unix seconds. */
  created: number;
}

export interface FaceItem {
  id: string;
  user_id: string;
  face_id: string;
  alias: string;
  label: string;
  source: string;
  created_at: string;
  updated_at: string;
  token_count: number;
  synced: boolean;
  /** Clock time (ms) of the last sync; preparation progress is computed from it, no timers. */
  sync_started_ms: number | null;
  /** Token count that the last sync prepared (progress is shown for that one). */
  synced_token_count: number | null;
  billing_source: BillingSource | null;
}

export interface DocumentRecord extends FaceItem {
  type: string;
  perspective: string;
  face_speaker: string | null;
  version: number;
  content: string;
}

export interface ThreadRecord extends FaceItem {
  messages: { role: string; content: string; from: string }[];
  messages_archived: number;
  /** interviewer_billing_source given at creation; null = automatic choice. */
  override: BillingSource | null;
}

export interface ConnectionRecord {
  /** `<user id>:<provider>` */
  id: string;
  user_id: string;
  provider: string;
  connected_at: string;
  /** The local provider's access token is never used, so only its digest is kept. */
  token_sha256: string;
}

export interface Collections {
  users: UserRecord;
  keys: KeyRecord;
  faces: FaceRecord;
  documents: DocumentRecord;
  threads: ThreadRecord;
  connections: ConnectionRecord;
}
export type CollectionName = keyof Collections;
export const COLLECTION_NAMES: CollectionName[] = ['users', 'keys', 'faces', 'documents', 'threads', 'connections'];

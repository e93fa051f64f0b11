import { requireModelAllowed } from '../access.js';
import type { AuthInfo } from '../auth.js';
import { charge } from '../billing.js';
import type { BillingSource, Collections, FaceItem, FaceRecord } from '../records.js';
import type { ServiceCore } from '../service-core.js';

/**
 * The first sync after a change charges token_count (`override`: a thread's interviewer_billing_source)
 * and starts the preparation; an item synced and not changed since is left as it is, free.
 */
export function syncItem<C extends 'documents' | 'threads'>(
  svc: ServiceCore,
  auth: AuthInfo,
  collection: C,
  item: Collections[C],
  face: FaceRecord,
  override: BillingSource | null,
): void {
  if (item.synced) return;
  requireModelAllowed(auth, face.default_model);
  const now = svc.clock.now();
  item.billing_source = charge(svc, now, auth.user, auth.key, item.token_count, override);
  item.synced = true;
  item.sync_started_ms = now.getTime();
  item.synced_token_count = item.token_count;
  item.updated_at = now.toISOString();
  svc.store.put(collection, item);
}

/** A change (new content, new messages): the item must be synced again, its preparation is forgotten. */
export function markChanged(item: FaceItem, now: Date): void {
  item.synced = false;
  item.sync_started_ms = null;
  item.synced_token_count = null;
  item.updated_at = now.toISOString();
}

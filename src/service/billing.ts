import { type AuthInfo, requireModelAllowed } from './auth.js';
import { conflict, paymentRequired } from './errors.js';
import { formatUsd, MICRO_USD_PER_TOKEN, PLANS, usdToMicroFloor } from './plans.js';
import type { BillingSource, Collections, FaceItem, FaceRecord, KeyRecord, UserRecord } from './records.js';
import type { ServiceCore } from './service-core.js';

/**
 * Billing at sync, in the spec's order: oauth (Connect plan, connected), the monthly compile quota (Standard, Pro)
 * when it covers the whole token count, credits, else 402. Synchronous: check and charge happen in one event-loop
 * turn, so parallel syncs can never both pass a check that only one of them can afford.
 */

const monthOf = (date: Date): string => date.toISOString().slice(0, 7);

const quotaUsed = (user: UserRecord, now: Date): number => (user.quota_month === monthOf(now) ? user.quota_used : 0);

export function quotaView(user: UserRecord, now: Date): { tokens_used: number; tokens_limit: number } {
  return { tokens_used: quotaUsed(user, now), tokens_limit: PLANS[user.plan].monthly_quota };
}

const isConnected = (svc: ServiceCore, user: UserRecord): boolean =>
  PLANS[user.plan].oauth && svc.store.get('connections', `${user.id}:${svc.provider}`) !== undefined;

/** 409 for an interviewer_billing_source that can never apply to this user (at thread creation and sync). */
export function checkOverrideAvailable(svc: ServiceCore, user: UserRecord, override: BillingSource): void {
  if (override === 'oauth' && !isConnected(svc, user)) {
    throw conflict(
      'billing_source_unavailable',
      PLANS[user.plan].oauth
        ? `interviewer_billing_source oauth needs an active ${svc.provider} connection; connect it first`
        : `interviewer_billing_source oauth needs the Connect plan; this user is on the ${user.plan} plan`,
    );
  }
  if (override === 'compile' && PLANS[user.plan].monthly_quota === 0) {
    throw conflict(
      'billing_source_unavailable',
      `interviewer_billing_source compile needs a plan with a compile quota (standard, pro); this user is on the ${user.plan} plan`,
    );
  }
}

/** The source that would pay for `tokens` now, or the error that refuses it. Charges nothing. */
export function chooseSource(
  svc: ServiceCore,
  now: Date,
  user: UserRecord,
  tokens: number,
  override: BillingSource | null,
): BillingSource {
  const cost = tokens * MICRO_USD_PER_TOKEN;
  const quota = PLANS[user.plan].monthly_quota;
  const quotaLeft = quota - quotaUsed(user, now);
  if (override) {
    checkOverrideAvailable(svc, user, override);
    if (override === 'compile' && quotaLeft < tokens) {
      throw paymentRequired(
        'insufficient_quota',
        `this sync needs ${tokens} tokens of compile quota; ${quotaLeft} of ${quota} are left this month`,
      );
    }
    if (override === 'credits' && user.credits_micro < cost) throw insufficientCredits(user, cost);
    return override;
  }
  if (isConnected(svc, user)) return 'oauth';
  if (quota > 0 && quotaLeft >= tokens) return 'compile';
  if (user.credits_micro >= cost) return 'credits';
  throw insufficientCredits(user, cost);
}

function insufficientCredits(user: UserRecord, cost: number): Error {
  return paymentRequired(
    'insufficient_credits',
    `this sync costs ${formatUsd(cost)}; the credit balance is ${formatUsd(user.credits_micro)}`,
  );
}

/**
 * The first sync after a change charges token_count to its source (`override`: a thread's interviewer_billing_source)
 * and every key's budget on the chain, or throws charging nothing, and starts the preparation; a later one is free.
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
  const { user, key } = auth;
  const now = svc.clock.now();
  const tokens = item.token_count;
  const source = chooseSource(svc, now, user, tokens, override);
  const cost = tokens * MICRO_USD_PER_TOKEN;
  // The key and every key it descends from: a child key spends out of its parents' budgets too.
  const chain: KeyRecord[] = [];
  for (let k: KeyRecord | undefined = key; k; k = k.parent_id ? svc.store.get('keys', k.parent_id) : undefined) {
    chain.push(k);
    if (k.budget_usd === null) continue;
    const budget = usdToMicroFloor(k.budget_usd);
    if (k.spent_micro + cost > budget) {
      throw paymentRequired(
        'budget_exceeded',
        `this sync costs ${formatUsd(cost)}; key ${k.key_prefix} has spent ${formatUsd(k.spent_micro, [budget])} of its ${formatUsd(budget, [k.spent_micro])} budget`,
      );
    }
  }
  if (source === 'compile') {
    const month = monthOf(now);
    if (user.quota_month !== month) {
      user.quota_month = month;
      user.quota_used = 0;
    }
    user.quota_used += tokens;
  } else if (source === 'credits') {
    user.credits_micro -= cost;
  }
  svc.store.put('users', user);
  for (const k of chain) {
    k.spent_micro += cost;
    svc.store.put('keys', k);
  }
  item.billing_source = source;
  item.synced = true;
  item.sync_started_ms = now.getTime();
  item.synced_token_count = tokens;
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

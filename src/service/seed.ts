import { mintKey } from './auth.js';
import { newId } from './ids.js';
import { microToUsd, PLANS } from './plans.js';
import type { PlanName } from './records.js';
import type { Store } from './store.js';

export type BootstrapUser = ReturnType<typeof seedUsers>[number];

/** One user per plan (made once), a new bootstrap key each at every start (docs/local-service-choices.md). */
export function seedUsers(store: Store, now: Date) {
  return (Object.keys(PLANS) as PlanName[]).map((plan) => {
    let user = [...store.values('users')].find((u) => u.plan === plan);
    if (!user) {
      user = {
        id: newId('usr'),
        plan,
        account: `${plan}@facectl.local`,
        credits_micro: PLANS[plan].credits_micro,
        quota_month: now.toISOString().slice(0, 7),
        quota_used: 0,
        created_at: now.toISOString(),
      };
      store.put('users', user);
    }
    const { secret, ...minted } = mintKey(store);
    store.put('keys', {
      ...minted,
      user_id: user.id,
      parent_id: null,
      bootstrap: true,
      name: `bootstrap (${plan})`,
      created_at: now.toISOString(),
      expires_at: null,
      scopes: ['v1:*'],
      budget_usd: null,
      spent_micro: 0,
      allowed_face_ids: null,
      allowed_llm_models: null,
    });
    return {
      plan,
      // The bootstrap key's secret: printed by `serve` at start, never stored.
      key: secret,
      user_id: user.id,
      credits_usd: microToUsd(user.credits_micro),
      compile_quota_tokens: PLANS[plan].monthly_quota,
    };
  });
}

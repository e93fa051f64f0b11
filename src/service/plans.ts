import type { PlanName } from './records.js';

/** The seeded plans (team decision): starting credits and the monthly compile quota in tokens. */
export const PLANS: Record<PlanName, { credits_micro: number; monthly_quota: number; oauth: boolean }> = {
  free: { credits_micro: 1_000_000, monthly_quota: 0, oauth: false },
  standard: { credits_micro: 5_000_000, monthly_quota: 100_000, oauth: false },
  pro: { credits_micro: 20_000_000, monthly_quota: 1_000_000, oauth: false },
  connect: { credits_micro: 5_000_000, monthly_quota: 0, oauth: true },
};

/** $2.00 per 1,000,000 tokens, whatever the billing source. */
export const MICRO_USD_PER_TOKEN = 2;

export const microToUsd = (micro: number): number => micro / 1_000_000;

/** The largest whole number of micro-dollars that does not exceed `usd` (a budget is never rounded up). */
export function usdToMicroFloor(usd: number): number {
  let micro = Math.round(usd * 1_000_000);
  if (micro / 1_000_000 > usd) micro -= 1;
  return micro;
}

/**
 * Dollars: cents when whole cents, else micro-dollars. `alongside`: the other figures said with it (spent
 * of a budget), so all show the same digits: `$0.000000 of its $0.000100`, never `$0.00 of its $0.000100`.
 */
export function formatUsd(micro: number, alongside: number[] = []): string {
  const cents = [micro, ...alongside].every((m) => m % 10_000 === 0);
  return `$${microToUsd(micro).toFixed(cents ? 2 : 6)}`;
}

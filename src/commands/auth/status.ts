import { usd, verb } from '../kit.js';
import { activeProfile, KEY_SOURCE_LABELS, keyPrefix } from '../../config/credentials.js';
import type { Column, Context } from '../../context.js';
import { ApiError, AuthError, CliError, withoutKeys } from '../../errors.js';

/** The local part is printed even when the service cannot be reached; the exit code still tells. */
type AuthStatus = { profile: string; base_url: string; base_url_source: string; logged_in: boolean; error?: string } & {
  [K in 'key_prefix' | 'key_source' | 'key_base_url']: string | null;
} & { [K in 'key_id' | 'key_name' | 'plan' | 'expires_at']?: string | null } & {
  [K in 'budget_usd' | 'spent_usd' | 'budget_left_usd']?: number | null;
} & { scopes?: string[] | null };

/** The rows of the table; one without a value (what the service did not tell, or was not asked) is left out. */
const FIELDS: Column<AuthStatus>[] = [
  { header: 'base url', value: (s) => `${s.base_url} (from ${s.base_url_source})` },
  { header: 'profile', value: (s) => s.profile },
  { header: 'key', value: (s) => (s.key_prefix ? `${s.key_prefix}… (from ${s.key_source})` : 'none') },
  { header: 'stored key for', value: (s) => s.key_base_url },
  { header: 'key name', value: (s) => s.key_name },
  { header: 'plan', value: (s) => s.plan },
  { header: 'scopes', value: (s) => s.scopes },
  // null is a key that never expires; absent, not said.
  { header: 'expires', value: (s) => (s.expires_at === null ? 'never' : s.expires_at) },
  { header: 'budget left', value: budgetText },
];

const BASE_URL_SOURCES = { flag: '--base-url', env: 'FACECTL_BASE_URL', profile: 'profile', default: 'default' };

export default verb({
  description:
    'Show the base URL and where it came from, the profile, the key prefix and where the key came from, ' +
    'and what the service says about the key: expiry, scopes, plan, budget left. Uses an endpoint the ' +
    'published interface does not show (GET /v1/auth/api-keys/current).',
  examples: [
    'facectl auth status',
    'facectl auth status --json | jq .key_source',
    'FACECTL_API_KEY=fcs_... facectl auth status',
  ],
  run: (ctx) => runStatus(ctx),
});

export async function runStatus(ctx: Context): Promise<AuthStatus> {
  const creds = await ctx.credentials();
  let keyError: unknown;
  const found = await creds.apiKey().catch((error: unknown) => {
    // The stored key belongs to another base URL: show where it belongs, then the error.
    if (!(error instanceof AuthError)) throw error;
    keyError = error;
    return undefined;
  });
  const status: AuthStatus = {
    profile: await activeProfile(ctx),
    base_url: creds.baseUrl,
    base_url_source: BASE_URL_SOURCES[creds.baseUrlSource],
    logged_in: found !== undefined,
    key_prefix: found ? keyPrefix(found.key) : null,
    key_source: found ? KEY_SOURCE_LABELS[found.source] : null,
    // Of the stored key: said when it is the key in use, or when it was refused for belonging to another base URL.
    key_base_url: found === undefined || found.source === 'profile' ? (creds.keyBaseUrl ?? null) : null,
  };
  if (!found) {
    render(ctx, status, keyError);
    throw keyError ?? new AuthError(`not logged in: ${creds.describe()}`);
  }
  const spinner = ctx.out.spinner(`Asking ${creds.baseUrl} about the key`);
  const current = await import('../../contract/keys.js')
    .then(async ({ getCurrentApiKey }) => (await ctx.api()).call(getCurrentApiKey, {}))
    .finally(() => spinner.stop())
    .catch((error: unknown) => {
      // A key the service refuses is no login, though one is stored.
      if (error instanceof ApiError && error.status === 401) status.logged_in = false;
      if (error instanceof CliError) render(ctx, status, error);
      throw error;
    });
  // Each field as the service gave it (absent when it left one out or sent another type).
  const { budget_usd: budget, spent_usd: spent } = current;
  Object.assign(status, {
    key_id: current.id,
    key_name: current.name,
    plan: current.plan ?? null,
    scopes: current.scopes ?? null,
    expires_at: current.expires_at,
    budget_usd: budget,
    spent_usd: spent,
    budget_left_usd:
      typeof budget === 'number' && typeof spent === 'number'
        ? Math.round(Math.max(0, budget - spent) * 1e6) / 1e6
        : budget === null
          ? null
          : undefined,
  });
  render(ctx, status);
  return status;
}

/** The error, if any, goes into the JSON record; a person reads it once, on stderr, as the error itself. */
function render(ctx: Context, status: AuthStatus, error?: unknown): void {
  const shown = FIELDS.filter((f) => f.value(status) !== undefined && f.value(status) !== null);
  // The message as every error is shown: a key the service quoted back by its prefix.
  if (ctx.out.json) ctx.out.record(error instanceof Error ? { ...status, error: withoutKeys(error.message) } : status);
  else ctx.out.record(status, shown);
}

/** `$0.004 of $0.02`; a budget of null is none (unlimited); one the service did not give is left out. */
function budgetText(s: AuthStatus): string | undefined {
  if (s.budget_usd === null) return 'unlimited';
  if (s.budget_usd === undefined) return undefined;
  return `${typeof s.budget_left_usd === 'number' ? usd(s.budget_left_usd) : '—'} of ${usd(s.budget_usd)}`;
}

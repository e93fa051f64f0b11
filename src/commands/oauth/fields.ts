import type { Lenient } from '../../api/answers.js';
import type { Column } from '../../context.js';
import type { OAuthConnection } from '../../contract/oauth.js';
import { ApiError } from '../../errors.js';

/** An entry of the connection list as commands read it (provider and connected are needed: api/answers.ts). */
export type ConnectionAnswer = Lenient<OAuthConnection>;

export const CONNECTION_COLUMNS: Column<ConnectionAnswer>[] = [
  { header: 'provider', value: (c) => c.provider },
  { header: 'connected', value: (c) => c.connected },
  { header: 'connected_at', value: (c) => c.connected_at },
];

/**
 * The service refuses every OAuth endpoint to users not on the Connect plan (403 plan_required). Say
 * what that means for the user, keeping the exit code (6) and the service's own detail.
 */
export function explainPlanRequired(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.code !== 'plan_required') return error;
  const detail = typeof error.detail === 'string' ? ` (${error.detail})` : '';
  return new ApiError(
    `OAuth connections are only for the Connect plan: the service refused this key's user with 403 plan_required${detail}`,
    error.status,
    {
      code: error.code,
      detail: error.detail,
      hint: 'Connect plan required — see `facectl oauth --help`; use a key of a Connect-plan user',
      cause: error,
    },
  );
}

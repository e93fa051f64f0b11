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
 * The service refuses every OAuth endpoint to users not on the Connect plan (403 plan_required). Said
 * once: in the service's own words when it gives them (the status line follows), else in ours; the fix
 * says what to do, keeping the exit code (6).
 */
export function explainPlanRequired(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.code !== 'plan_required') return error;
  const said = typeof error.detail === 'string' && error.detail.trim() !== '' ? error.detail : undefined;
  return new ApiError(
    said ?? "OAuth connections are only for the Connect plan: the service refused this key's user",
    error.status,
    {
      code: error.code,
      detail: error.detail,
      hint: 'Connect plan required — see `facectl oauth --help`; use a key of a Connect-plan user',
      cause: error,
    },
  );
}

import type { Lenient } from '../../api/answers.js';
import type { Context } from '../../context.js';
import type { OAuthConnection } from '../../contract/oauth.js';
import type { AnyRoute } from '../../contract/route.js';
import { ApiError } from '../../errors.js';
import { fieldColumns, type RouteInput, send } from '../kit.js';

export const PROVIDER_ARG = ['<provider>', 'the provider id (facectl serve offers `example`)'] as const;

export const CONNECTION_COLUMNS = fieldColumns<Lenient<OAuthConnection>>('provider', 'connected', 'connected_at');

/** An OAuth request; the refusal of a user not on the Connect plan (403 plan_required) says so, with the fix. */
export async function sendOAuth<R extends AnyRoute>(ctx: Context, route: R, input: RouteInput<R> = {}) {
  return send(ctx, route, input).catch((error: unknown) => {
    if (!(error instanceof ApiError) || error.code !== 'plan_required') throw error;
    const said = typeof error.detail === 'string' && error.detail.trim() !== '' ? error.detail : undefined;
    throw new ApiError(
      said ?? "OAuth connections are only for the Connect plan: the service refused this key's user",
      error.status,
      {
        code: error.code,
        detail: error.detail,
        hint: error.hint,
        cause: error,
      },
    );
  });
}

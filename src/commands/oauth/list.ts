import type { Context } from '../../context.js';
import { listOAuthConnections, type OAuthConnection } from '../../contract/oauth.js';
import { CONNECTION_COLUMNS, explainPlanRequired } from './fields.js';

/** `facectl oauth list`: the OAuth connections of the key's user (Connect plan only). */

export async function listConnectionsAction(ctx: Context): Promise<void> {
  await runListConnections(ctx);
}

export async function runListConnections(ctx: Context): Promise<OAuthConnection[]> {
  const api = await ctx.api();
  let connections: OAuthConnection[];
  try {
    connections = await api.call(listOAuthConnections, {}, { signal: ctx.signal });
  } catch (error) {
    throw explainPlanRequired(error);
  }
  ctx.out.list(connections, CONNECTION_COLUMNS);
  return connections;
}

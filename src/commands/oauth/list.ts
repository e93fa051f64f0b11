import { listOAuthConnections, type OAuthConnection } from '../../contract/oauth.js';
import { type RequestContext, send } from '../kit.js';
import { CONNECTION_COLUMNS, explainPlanRequired } from './fields.js';

/** `facectl oauth list`: the OAuth connections of the key's user (Connect plan only). */

export async function runListConnections(ctx: RequestContext): Promise<OAuthConnection[]> {
  let connections: OAuthConnection[];
  try {
    connections = await send(ctx, listOAuthConnections, {});
  } catch (error) {
    throw explainPlanRequired(error);
  }
  ctx.out.list(connections, CONNECTION_COLUMNS);
  return connections;
}

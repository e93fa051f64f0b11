import type { AnswerOf } from '../../api/answers.js';
import { send, verb } from '../kit.js';
import { CONNECTION_COLUMNS, explainPlanRequired } from './fields.js';

/** `facectl oauth list`: the OAuth connections of the key's user (Connect plan only). */
export default verb({
  description: "List the OAuth connections of the key's user.",
  examples: ['facectl oauth list', "facectl oauth list --json | jq '.[] | select(.connected)'"],
  async run(ctx) {
    const { listOAuthConnections } = await import('../../contract/oauth.js');
    let connections: AnswerOf<typeof listOAuthConnections>;
    try {
      connections = await send(ctx, listOAuthConnections, {});
    } catch (error) {
      throw explainPlanRequired(error);
    }
    ctx.out.list(connections, CONNECTION_COLUMNS);
    return connections;
  },
});

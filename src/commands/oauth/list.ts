import { verb } from '../kit.js';
import { CONNECTION_COLUMNS, sendOAuth } from './fields.js';

export default verb({
  description: "List the OAuth connections of the key's user.",
  examples: ['facectl oauth list', "facectl oauth list --json | jq '.[] | select(.connected)'"],
  async run(ctx) {
    const { listOAuthConnections } = await import('../../contract/oauth.js');
    const connections = await sendOAuth(ctx, listOAuthConnections);
    ctx.out.list(connections, CONNECTION_COLUMNS);
    return connections;
  },
});

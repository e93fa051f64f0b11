import type { AnswerOf } from '../../api/answers.js';
import type { disconnectOAuth, listOAuthConnections } from '../../contract/oauth.js';
import { CliError, DeclinedError, ExitCode, UsageError } from '../../errors.js';
import { type PromptContext, type RequestContext, requireArgument, send, verb } from '../kit.js';
import { explainPlanRequired } from './fields.js';

/**
 * `facectl oauth disconnect <provider>`: destructive, so it asks first on a terminal unless --yes; but
 * only once GET /v1/oauth shows the provider connected (else exit 4 at once, nothing asked).
 */

export interface DisconnectOptions {
  provider: string;
  yes: boolean;
}

/** The connection list as read: each entry's provider and whether it is connected are needed (api/answers.ts). */
type Connections = AnswerOf<typeof listOAuthConnections>;

/** What `oauth disconnect` uses of the context: the client, and a terminal to confirm on. */
type DisconnectContext = RequestContext & PromptContext;

export default verb({
  description: 'Disconnect a provider. Asks for confirmation on a terminal; scripts pass --yes.',
  args: [['<provider>', 'the provider id']],
  flags: { yes: { short: '-y', help: 'do not ask for confirmation' } },
  examples: ['facectl oauth disconnect example', 'facectl oauth disconnect example --yes --no-input'],
  run: (ctx, given, provider) =>
    runDisconnect(ctx, { provider: requireArgument('provider', provider), yes: given.yes }),
});

export async function runDisconnect(
  ctx: DisconnectContext,
  opts: DisconnectOptions,
): Promise<AnswerOf<typeof disconnectOAuth>> {
  const { disconnectOAuth, listOAuthConnections } = await import('../../contract/oauth.js');
  const { provider } = opts;
  // Checked first (README): what is not connected is said at once, exit 4, with or without --yes or a
  // terminal; nobody confirms (or is asked for --yes to disconnect) what is not connected.
  let connections: Connections;
  try {
    connections = await send(ctx, listOAuthConnections, {});
  } catch (error) {
    throw explainPlanRequired(error);
  }
  if (!connections.some((c) => c.provider === provider && c.connected)) throw notConnected(provider, connections);
  if (!opts.yes && !ctx.io.canPrompt()) {
    throw new UsageError('--yes is required to disconnect when not running interactively', {
      hint: `run \`facectl oauth disconnect ${provider} --yes\``,
    });
  }
  if (!opts.yes) {
    const confirmed = await ctx.prompter.confirm({
      message: `Disconnect ${provider}? Compile interviews will no longer be billed to that account.`,
      default: false,
    });
    if (!confirmed) throw new DeclinedError(`not disconnected: ${provider} is still connected`);
  }
  let result: AnswerOf<typeof disconnectOAuth>;
  try {
    result = await send(ctx, disconnectOAuth, { params: { provider } });
  } catch (error) {
    throw explainPlanRequired(error);
  }
  ctx.out.done(result.detail ?? `Disconnected ${provider}`, result);
  return result;
}

/** Nothing to disconnect: exit 4 (not found), as the service's 404 not_connected would be. */
function notConnected(provider: string, connections: Connections): CliError {
  const known = connections.some((c) => c.provider === provider);
  const offered = connections.map((c) => c.provider).join(', ') || 'none';
  return new CliError(
    known
      ? `${provider} is not connected; nothing to disconnect`
      : `${provider} is not connected; nothing to disconnect (the service offers: ${offered})`,
    ExitCode.notFound,
    {
      code: 'not_connected',
      // As the service's 404 not_connected would be hinted (api/error-mapping.ts).
      hint: 'nothing to do: that provider is not connected (`facectl oauth list` shows the connections)',
    },
  );
}

import { CliError, DeclinedError, ExitCode, UsageError } from '../../errors.js';
import { noPrompt, requireArgument, verb } from '../kit.js';
import { PROVIDER_ARG, sendOAuth } from './fields.js';

/** On a terminal, asks only once GET /v1/oauth shows the provider connected (else exit 4 at once). */
export default verb({
  description: 'Disconnect a provider. Asks for confirmation on a terminal; scripts pass --yes.',
  args: [PROVIDER_ARG],
  flags: { yes: { short: '-y', help: 'do not ask for confirmation' } },
  examples: ['facectl oauth disconnect example', 'facectl oauth disconnect example --yes --no-input'],
  async run(ctx, { yes }, given) {
    const provider = requireArgument('provider', given);
    // Checked before anything is sent: a script without --yes gets exit 2 whatever the service says.
    if (!yes && !ctx.io.canPrompt()) {
      throw new UsageError(`--yes is required to disconnect when not running interactively (${noPrompt(ctx)})`, {
        hint: `run \`facectl oauth disconnect ${provider} --yes\``,
      });
    }
    const { disconnectOAuth, listOAuthConnections } = await import('../../contract/oauth.js');
    const connections = await sendOAuth(ctx, listOAuthConnections);
    if (!connections.some((c) => c.provider === provider && c.connected)) {
      // As the service's 404 not_connected would be (api/error-mapping.ts).
      const offered = connections.map((c) => c.provider).join(', ') || 'none';
      const known = connections.some((c) => c.provider === provider);
      throw new CliError(
        `${provider} is not connected; nothing to disconnect${known ? '' : ` (the service offers: ${offered})`}`,
        ExitCode.notFound,
        {
          code: 'not_connected',
          hint: 'nothing to do: that provider is not connected (`facectl oauth list` shows the connections)',
        },
      );
    }
    if (!yes) {
      const confirmed = await ctx.prompter.confirm({
        message: `Disconnect ${provider}? Compile interviews will no longer be billed to that account.`,
        default: false,
      });
      // "No" did nothing: exit 1, as gh does (130 stays for Ctrl-C).
      if (!confirmed) throw new DeclinedError(`Not disconnected: ${provider} is still connected`);
    }
    const result = await sendOAuth(ctx, disconnectOAuth, { params: { provider } });
    ctx.out.done(result.detail ?? `Disconnected ${provider}`, result, `${provider} was disconnected all the same`);
    return result;
  },
});

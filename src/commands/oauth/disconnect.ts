import * as z from 'zod';
import { disconnectOAuth } from '../../contract/oauth.js';
import { DeclinedError, UsageError } from '../../errors.js';
import { requireArgument } from '../../input/options.js';
import { parseOptions, type PromptContext, type RequestContext, send } from '../kit.js';
import { explainPlanRequired } from './fields.js';

/** `facectl oauth disconnect <provider>`: destructive, so it asks first on a terminal unless --yes. */

const optionsSchema = z.object({ yes: z.boolean().default(false) });

export type DisconnectOptions = z.output<typeof optionsSchema> & { provider: string };

/** What `oauth disconnect` uses of the context: the client, and a terminal to confirm on. */
type DisconnectContext = RequestContext & PromptContext;

export async function disconnectAction(
  ctx: DisconnectContext,
  raw: Record<string, unknown>,
  provider: string,
): Promise<void> {
  await runDisconnect(ctx, { provider: requireArgument('provider', provider), ...parseOptions(optionsSchema, raw) });
}

export async function runDisconnect(ctx: DisconnectContext, opts: DisconnectOptions): Promise<{ detail: string }> {
  if (!opts.yes) {
    if (!ctx.io.canPrompt()) {
      throw new UsageError('--yes is required to disconnect when not running interactively', {
        hint: `run \`facectl oauth disconnect ${opts.provider} --yes\``,
      });
    }
    const confirmed = await ctx.prompter.confirm({
      message: `Disconnect ${opts.provider}? Compile interviews will no longer be billed to that account.`,
      default: false,
    });
    if (!confirmed) throw new DeclinedError(`not disconnected: ${opts.provider} is still connected`);
  }
  let result: { detail: string };
  try {
    result = await send(ctx, disconnectOAuth, { params: { provider: opts.provider } });
  } catch (error) {
    throw explainPlanRequired(error);
  }
  // Once: a person on a terminal reads the check line; scripts and --json get the record on stdout.
  if (ctx.io.stdoutIsTTY && ctx.io.stderrIsTTY && !ctx.out.json) ctx.out.success(result.detail);
  else ctx.out.record(result, [{ header: 'detail', value: (r) => r.detail }]);
  return result;
}

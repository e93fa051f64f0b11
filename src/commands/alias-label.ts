import { checkAlias } from '../input/options.js';
import { type PromptContext, requireValue } from './kit.js';

/**
 * The face (by alias) and the label a document or a thread is filed under: from --alias and --label,
 * else asked for on a terminal; without one, a missing flag is a usage error naming it.
 */
export async function requireAliasAndLabel(
  ctx: PromptContext,
  flags: { alias?: string | undefined; label?: string | undefined },
  what: 'document' | 'thread',
): Promise<{ alias: string; label: string }> {
  const alias = await requireValue(ctx, {
    flag: '--alias',
    value: flags.alias,
    message: `Alias of the face the ${what} belongs to`,
    validate: checkAlias,
  });
  const label = await requireValue(ctx, { flag: '--label', value: flags.label, message: `Label of the ${what}` });
  return { alias, label };
}

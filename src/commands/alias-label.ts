import { type PromptContext, requireValue } from './kit.js';

/**
 * An alias given as a flag or typed at a prompt. The seed says only that it is a string (a slug whose
 * grammar it does not give), so the client refuses just an empty one; the service checks its own rule.
 */
export function checkAlias(text: string): string | undefined {
  return text.trim() === '' ? 'an alias must not be empty' : undefined;
}

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
    check: checkAlias,
  });
  const label = await requireValue(ctx, { flag: '--label', value: flags.label, message: `Label of the ${what}` });
  return { alias, label };
}

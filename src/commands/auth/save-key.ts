import { keyPrefix, storedKeyBaseUrl } from '../../config/credentials.js';
import type { ConfigStore, Context } from '../../context.js';

/**
 * Locked write of a key and its base URL (setsBaseUrl: the profile's too); a key replaced (kept nowhere) is named,
 * and so is FACECTL_API_KEY holding another key, which would be used instead. `agreed`: the key the user agreed
 * to replace ('' none); another one found under the lock is left, and returned.
 */
export async function saveKeyInProfile(
  ctx: Pick<Context, 'out' | 'env'>,
  store: ConfigStore,
  profile: string,
  key: string,
  baseUrl: string,
  setsBaseUrl: boolean,
  agreed?: string,
): Promise<string | undefined> {
  const saved = { api_key: key, api_key_base_url: baseUrl, ...(setsBaseUrl ? { base_url: baseUrl } : {}) };
  const held = (settings: { api_key?: unknown }) => (typeof settings.api_key === 'string' ? settings.api_key : '');
  const unless = agreed === undefined ? undefined : (now: { api_key?: unknown }) => ![agreed, ''].includes(held(now));
  const { madeDefault, before, refused } = await store.updateProfile(profile, saved, { defaultIfFirst: true, unless });
  if (refused) return held(before);

  const old = before.api_key;
  if (typeof old === 'string' && old !== '' && old !== key) {
    ctx.out.warn(
      `replaced key ${keyPrefix(old)}… (saved for ${storedKeyBaseUrl(before)}) in profile ${profile}; ` +
        'it is not kept anywhere else. To keep both, save each key in a profile of its own with --profile NAME',
    );
  }
  if (ctx.env.FACECTL_API_KEY && ctx.env.FACECTL_API_KEY.trim() !== key) {
    ctx.out.warn(
      'FACECTL_API_KEY is set to another key, which is used instead of the stored one (`unset FACECTL_API_KEY` to use it)',
    );
  }
  if (madeDefault) ctx.out.info(`profile ${profile} is now the default profile`);
  else if (profile !== store.defaultProfile) {
    ctx.out.info(
      `profile ${profile} is not the default one (${store.defaultProfile}); use it with --profile ${profile}, ` +
        `or make it the default with \`facectl auth switch ${profile}\``,
    );
  }
}

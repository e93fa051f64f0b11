import { keyPrefix, storedKeyBaseUrl } from '../../config/credentials.js';
import type { ConfigStore, Context } from '../../context.js';

/** One locked write of a key, its base URL and any new base_url; a key replaced is named (it is kept nowhere else). */
export async function saveKeyInProfile(
  ctx: Pick<Context, 'out'>,
  store: ConfigStore,
  profile: string,
  saved: { key: string; baseUrl: string; profileBaseUrl?: string },
): Promise<void> {
  const before = store.getProfile(profile);
  const { madeDefault } = await store.updateProfile(
    profile,
    {
      api_key: saved.key,
      api_key_base_url: saved.baseUrl,
      ...(saved.profileBaseUrl === undefined ? {} : { base_url: saved.profileBaseUrl }),
    },
    { defaultIfFirst: true },
  );

  const old = before.api_key;
  if (typeof old === 'string' && old !== '' && old !== saved.key) {
    ctx.out.warn(
      `replaced key ${keyPrefix(old)}… (saved for ${storedKeyBaseUrl(before)}) in profile ${profile}; ` +
        'it is not kept anywhere else. To keep both, save each key in a profile of its own with --profile NAME',
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

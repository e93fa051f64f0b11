import { verb } from '../kit.js';
import { DEFAULT_BASE_URL } from '../../api/types.js';
import { activeProfile, checkNamedProfile, sameBaseUrl, storedKeyBaseUrl } from '../../config/credentials.js';
import { findSetting } from '../../config/settings.js';
import { checkKnownProfile, type ProfileSettings } from '../../config/profile-store.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';

export default verb({
  description: 'Change a setting of the active profile (api_key only through `facectl auth login`).',
  args: [
    ['<key>', 'base_url or default_profile'],
    ['<value>', 'the new value'],
  ],
  examples: [
    'facectl config set base_url https://api.example.com',
    'facectl config set base_url http://127.0.0.1:8787 --profile local',
    'facectl config set default_profile work',
  ],
  run: (ctx, _flags, key, value) => runConfigSet(ctx, key, value),
});

/** Sets `key`, or with `value` undefined removes it (`config unset`). */
export async function runConfigSet(ctx: Context, key: string, value: string | undefined): Promise<void> {
  const setting = findSetting(key, true);
  // A name no profile can have is refused as by every command, even for a global setting (default_profile).
  checkNamedProfile(ctx);
  if (setting.refuseSet && value === undefined) {
    throw new UsageError(`${key} is removed with the key, by \`facectl auth logout\``, {
      hint: 'run `facectl auth logout`',
    });
  }
  if (setting.refuseSet) throw new UsageError(setting.refuseSet.message, { hint: setting.refuseSet.hint });
  const parsed = value === undefined ? undefined : setting.parse(value);
  const store = await ctx.config();
  let profile: string | null = null;
  // A value set to what it was, or removed where there was none, changed nothing.
  let changed = false;
  // The one global setting is default_profile.
  if (setting.scope === 'global') {
    changed = (parsed ?? 'default') !== store.defaultProfile;
    if (parsed !== undefined) checkKnownProfile(store, parsed);
    await store.setDefaultProfile(parsed);
  } else {
    // A profile named with --profile or FACECTL_PROFILE need not exist yet: setting a value creates it (unset: refused).
    profile = await activeProfile(ctx, { creates: value !== undefined });
    const before = store.getProfile(profile);
    // A key stored before keys were bound to a base URL is pinned to the old one, so a move leaves it behind.
    const pin =
      key === 'base_url' && typeof before.api_key === 'string' && before.api_key && !before.api_key_base_url
        ? { api_key_base_url: storedKeyBaseUrl(before) }
        : {};
    changed = key in before ? before[key] !== parsed : parsed !== undefined;
    if (parsed !== undefined || key in before) await store.updateProfile(profile, { [key]: parsed, ...pin });
    if (key === 'base_url' && changed) warnKeyStaysBehind(ctx, store.getProfile(profile), profile, parsed);
  }
  // `unset` says whether there was anything to remove, as `auth logout` does.
  const removed = value === undefined ? { removed: changed } : {};
  const result = { key, value: parsed ?? null, profile, ...removed, config_file: store.path };
  const where = profile ? ` in profile ${profile}` : '';
  if (value === undefined && !changed && !ctx.out.json)
    return ctx.out.info(`${key} is not set${where}; nothing to remove`);
  const said = parsed === undefined ? `Removed ${key}${where}` : `Set ${key} to ${parsed}${where}`;
  ctx.out.done(said, result, changed ? `the change was made all the same (${said})` : undefined);
}

/** A stored key stays bound to the base URL it was saved for: say so when the profile moves away from it. */
function warnKeyStaysBehind(ctx: Context, settings: ProfileSettings, profile: string, next: string | undefined): void {
  if (typeof settings.api_key !== 'string' || !settings.api_key) return;
  const boundTo = storedKeyBaseUrl(settings);
  const target = next ?? DEFAULT_BASE_URL;
  if (sameBaseUrl(boundTo, target)) return;
  ctx.out.warn(
    `the key stored in profile ${profile} was saved for ${boundTo} and is not sent to ${target}. ` +
      `If ${target} is the same service at a new address, \`facectl auth login --stored-key --profile ${profile}\` ` +
      `checks that key there and keeps it for it; for another service, \`facectl auth login --profile ${profile}\` ` +
      'stores a key of its own',
  );
}

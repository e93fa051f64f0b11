import { activeProfile } from '../../config/credentials.js';
import { findSetting } from '../../config/settings.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';

/** `facectl config set|unset <key>`: change the settings file (written atomically, mode 0600). */

export interface SettingChange {
  key: string;
  value: string | null;
  profile: string | null;
  config_file: string;
}

export async function setAction(
  ctx: Context,
  _raw: Record<string, unknown>,
  key: string,
  value: string,
): Promise<void> {
  await runConfigSet(ctx, key, value);
}

export async function unsetAction(ctx: Context, _raw: Record<string, unknown>, key: string): Promise<void> {
  await runConfigSet(ctx, key, undefined);
}

export async function runConfigSet(ctx: Context, key: string, value: string | undefined): Promise<SettingChange> {
  const setting = findSetting(key);
  if (setting.refuseSet) {
    throw new UsageError(
      value === undefined ? 'api_key is removed with `facectl auth logout`' : setting.refuseSet.message,
      {
        hint: value === undefined ? 'run `facectl auth logout`' : setting.refuseSet.hint,
      },
    );
  }
  const parsed = value === undefined ? undefined : setting.parse(value);
  const store = await ctx.config();
  let profile: string | null = null;
  if (setting.scope === 'global') {
    if (key === 'default_profile') store.setDefaultProfile?.(parsed);
  } else {
    profile = await activeProfile(ctx);
    if (parsed === undefined) store.deleteProfileValue(profile, key);
    else store.setProfileValue(profile, key, parsed);
  }
  const result: SettingChange = { key, value: parsed ?? null, profile, config_file: store.path };
  const where = profile ? ` in profile ${profile}` : '';
  if (ctx.out.json) ctx.out.record(result);
  else ctx.out.success(parsed === undefined ? `Removed ${key}${where}` : `Set ${key} to ${parsed}${where}`);
  return result;
}

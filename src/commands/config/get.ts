import { verb } from '../kit.js';
import { activeProfile, checkNamedProfile } from '../../config/credentials.js';
import { findSetting } from '../../config/settings.js';
import { CliError, ExitCode } from '../../errors.js';
import type { SettingsContext } from '../kit.js';

/** `facectl config get <key>`: the stored value (not the effective one: `auth status` shows that). */

export interface SettingValue {
  key: string;
  value: string | null;
  profile: string | null;
}

export default verb({
  description: 'Print a setting of the active profile (api_key as its prefix only). Exit 1 when unset.',
  args: [['<key>', 'base_url, api_key or default_profile']],
  examples: ['facectl config get base_url', 'facectl config get base_url --profile work'],
  run: (ctx, _flags, key) => runConfigGet(ctx, key),
});

export async function runConfigGet(ctx: SettingsContext, key: string): Promise<SettingValue> {
  const setting = findSetting(key);
  checkNamedProfile(ctx);
  const store = await ctx.config();
  let stored: unknown;
  let profile: string | null = null;
  if (setting.scope === 'global') stored = store.getGlobal(key);
  else {
    profile = await activeProfile(ctx);
    stored = store.getProfile(profile)[key];
  }
  const value = stored === undefined || stored === null || stored === '' ? null : setting.show(stored);
  const result: SettingValue = { key, value, profile };
  if (ctx.out.json) ctx.out.record(result);
  else if (value !== null) ctx.out.text(`${value}\n`);
  // Like `git config`: an unset value is exit 1, so scripts can test for it.
  if (value === null) {
    // The fix names the profile when it is not the default one, as the command to type must.
    const flag = profile !== null && profile !== store.defaultProfile ? ` --profile ${profile}` : '';
    throw new CliError(`${key} is not set${profile ? ` in profile "${profile}"` : ''}`, ExitCode.error, {
      code: 'not_set',
      hint:
        key === 'api_key'
          ? `run \`facectl auth login${flag}\``
          : `set it with \`facectl config set ${key} <value>${flag}\``,
    });
  }
  return result;
}

import { verb } from '../kit.js';
import { activeProfile, checkNamedProfile } from '../../config/credentials.js';
import { findSetting } from '../../config/settings.js';
import { CliError, ExitCode } from '../../errors.js';

/** `facectl config get <key>`: the stored value (not the effective one: `auth status` shows that). */
export default verb({
  description: 'Print a setting of the active profile (api_key as its prefix only). Exit 1 when unset.',
  args: [['<key>', 'base_url, api_key or default_profile']],
  examples: ['facectl config get base_url', 'facectl config get base_url --profile work'],
  async run(ctx, _flags, key) {
    const setting = findSetting(key);
    checkNamedProfile(ctx);
    const store = await ctx.config();
    const profile = setting.scope === 'global' ? null : await activeProfile(ctx);
    // The one global setting, default_profile: unset, the profile named "default" is it, as `config list` shows.
    const stored = profile === null ? store.defaultProfile : store.getProfile(profile)[key];
    const value = stored === undefined || stored === null || stored === '' ? null : setting.show(stored);
    if (ctx.out.json) ctx.out.record({ key, value, profile });
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
            : `set it with \`facectl config set ${key} VALUE${flag}\``,
      });
    }
  },
});

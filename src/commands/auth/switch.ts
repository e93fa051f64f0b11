import { verb } from '../kit.js';
import { checkKnownProfile, checkProfileName } from '../../config/profile-store.js';

export default verb({
  description: 'Make an existing profile the default one (sets default_profile); unknown profiles are refused.',
  args: [['<profile>', 'the name of a profile in the configuration file']],
  examples: ['facectl auth switch work', 'facectl auth switch default'],
  async run(ctx, _flags, name) {
    const store = await ctx.config();
    // --profile chooses nothing here, but like every command's it must name a profile that exists (the default one aside).
    const flag = ctx.globals.profile;
    if (flag !== undefined && checkProfileName(flag, '--profile') !== store.defaultProfile) {
      checkKnownProfile(store, flag, '--profile');
    }
    checkKnownProfile(store, checkProfileName(name));
    const changed = store.defaultProfile !== name;
    await store.setDefaultProfile(name);
    const settings = store.getProfile(name);
    const result = {
      default_profile: name,
      base_url: typeof settings.base_url === 'string' ? settings.base_url : null,
      has_key: typeof settings.api_key === 'string' && settings.api_key !== '',
      config_file: store.path,
    };
    const said = `Switched to profile ${name}${result.base_url ? ` (${result.base_url})` : ''}`;
    ctx.out.done(said, result, changed ? `the default profile is ${name} all the same` : undefined);
    if (ctx.globals.profile === undefined && ctx.env.FACECTL_PROFILE) {
      ctx.out.warn(`FACECTL_PROFILE=${ctx.env.FACECTL_PROFILE} is set and takes precedence over the default profile`);
    }
  },
});

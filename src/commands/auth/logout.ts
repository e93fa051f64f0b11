import { verb } from '../kit.js';
import { activeProfile } from '../../config/credentials.js';

export default verb({
  description: 'Remove the stored API key from the active profile (other settings stay).',
  examples: ['facectl auth logout', 'facectl auth logout --profile work'],
  async run(ctx) {
    const store = await ctx.config();
    const profile = await activeProfile(ctx);
    const removed = typeof store.getProfile(profile).api_key === 'string';
    if (removed) await store.updateProfile(profile, { api_key: undefined, api_key_base_url: undefined });
    const result = { profile, removed, config_file: store.path };
    const said = `Removed the API key of profile ${profile}`;
    if (removed || ctx.out.json)
      ctx.out.done(said, result, removed ? `the key was removed all the same (${said})` : undefined);
    else ctx.out.info(`profile ${profile} has no stored API key; nothing to remove`);
    if (ctx.env.FACECTL_API_KEY) ctx.out.warn('FACECTL_API_KEY is still set in the environment and will be used');
  },
});

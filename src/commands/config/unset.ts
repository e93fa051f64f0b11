import { verb } from '../kit.js';
import { runConfigSet } from './set.js';

export default verb({
  description: 'Remove a setting from the active profile (`auth logout` removes the key).',
  args: [['<key>', 'base_url or default_profile']],
  examples: ['facectl config unset base_url', 'facectl config unset default_profile'],
  run: (ctx, _flags, key) => runConfigSet(ctx, key, undefined),
});

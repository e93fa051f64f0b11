import { verb } from './kit.js';
import { SERVE_FLAGS } from './serve-flags.js';

export default verb({
  description: 'Run the local Face Compilation Service (stateful, for offline use, scripts and CI).',
  flags: SERVE_FLAGS,
  examples: [
    'facectl serve',
    'facectl serve --port 0 --json',
    'facectl serve --data state.db --rate-limit 20 --consent approve',
  ],
  run: async (ctx, given) => (await import('./serve-run.js')).runServe(ctx, given),
});

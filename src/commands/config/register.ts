import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addExamples, lazyAction } from '../kit.js';

/** `facectl config ...`: read and change the settings file (profiles, base URL, default profile). */
export function registerConfig(program: Command, ctx: Context): void {
  const config = program
    .command('config')
    .description(
      'Read and change settings: base_url and api_key per profile, default_profile.\n' +
        'The file is $FACECTL_CONFIG_DIR/config.json when that is set, else the per-user config directory.',
    );

  const get = config
    .command('get')
    .description('Print a setting of the active profile (api_key as its prefix only). Exit 1 when unset.')
    .argument('<key>', 'base_url, api_key or default_profile')
    .action(lazyAction(ctx, async () => (await import('./get.js')).getAction));
  addExamples(get, ['facectl config get base_url', 'facectl config get base_url --profile work']);

  const set = config
    .command('set')
    .description('Change a setting of the active profile (api_key only through `facectl auth login`).')
    .argument('<key>', 'base_url or default_profile')
    .argument('<value>', 'the new value')
    .action(lazyAction(ctx, async () => (await import('./set.js')).setAction));
  addExamples(set, [
    'facectl config set base_url https://api.example.com',
    'facectl config set base_url http://127.0.0.1:8787 --profile local',
    'facectl config set default_profile work',
  ]);

  const unset = config
    .command('unset')
    .description('Remove a setting from the active profile (`auth logout` removes the key).')
    .argument('<key>', 'base_url or default_profile')
    .action(lazyAction(ctx, async () => (await import('./set.js')).unsetAction));
  addExamples(unset, ['facectl config unset base_url', 'facectl config unset default_profile']);

  const list = config
    .command('list')
    .description('List every profile and setting (keys as their prefix), and the file they are in.')
    .action(lazyAction(ctx, async () => (await import('./list.js')).listAction));
  addExamples(list, ['facectl config list', 'facectl config list --json | jq .profiles']);
}

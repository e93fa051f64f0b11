import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addVerbs } from '../kit.js';

/** `facectl config ...`: read and change the settings file (profiles, base URL, default profile). */
export function registerConfig(program: Command, ctx: Context): void {
  const config = program
    .command('config')
    .description(
      'Read and change settings: base_url and api_key per profile, default_profile.\n' +
        'The file is $FACECTL_CONFIG_DIR/config.json when that is set, else the per-user config directory.',
    );
  addVerbs(config, ctx, {
    get: {
      description: 'Print a setting of the active profile (api_key as its prefix only). Exit 1 when unset.',
      arguments: [['<key>', 'base_url, api_key or default_profile']],
      examples: ['facectl config get base_url', 'facectl config get base_url --profile work'],
      run: async () => (await import('./get.js')).getAction,
    },
    set: {
      description: 'Change a setting of the active profile (api_key only through `facectl auth login`).',
      arguments: [
        ['<key>', 'base_url or default_profile'],
        ['<value>', 'the new value'],
      ],
      examples: [
        'facectl config set base_url https://api.example.com',
        'facectl config set base_url http://127.0.0.1:8787 --profile local',
        'facectl config set default_profile work',
      ],
      run: async () => (await import('./set.js')).setAction,
    },
    unset: {
      description: 'Remove a setting from the active profile (`auth logout` removes the key).',
      arguments: [['<key>', 'base_url or default_profile']],
      examples: ['facectl config unset base_url', 'facectl config unset default_profile'],
      run: async () => (await import('./set.js')).unsetAction,
    },
    list: {
      description: 'List every profile and setting (keys as their prefix), and the file they are in.',
      examples: ['facectl config list', 'facectl config list --json | jq .profiles'],
      run: async () => (await import('./list.js')).listAction,
    },
  });
}

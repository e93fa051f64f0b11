import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addVerbs } from '../kit.js';

/** `facectl keys ...`: declared with commander only; the verb module loads when the command runs. */
export function registerKeysCommands(program: Command, ctx: Context): void {
  const keys = program.command('keys').description('Manage API keys.');
  addVerbs(keys, ctx, {
    create: {
      summary: 'Create an API key (the secret is shown once)',
      description:
        'Create an API key. The full secret is printed once, now; the service keeps only its hash.\n\n' +
        'Fields left out are inherited from the key making the request; a key cannot create a wider one.',
      options: [
        ['--name <name>', 'a label for the key'],
        ['--expires-in-days <days>', 'lifetime in days, 1 to 365 (default: that of the creating key)'],
        [
          '--scopes <scopes>',
          'comma-separated scopes: v1:*, v1:<area> or v1:<area>:<read|write>; areas keys, faces, compile, oauth',
        ],
        ['--budget-usd <usd>', 'spending budget in US dollars (0 or more)'],
        ['--allowed-face-ids <ids>', 'comma-separated face ids the key may use'],
        ['--allowed-llm-models <models>', 'comma-separated language models the key may use'],
        [
          '--save',
          'store the new key in the active profile (it then authenticates later commands); --profile NEW creates NEW',
        ],
      ],
      examples: [
        'facectl keys create --name ci --expires-in-days 30 --scopes v1:compile --budget-usd 5',
        'facectl keys create --name laptop --save',
        'facectl keys create --json --no-input --scopes v1:faces:read | jq -r .key',
      ],
      run: async () => (await import('./create.js')).createKeyAction,
    },
  });
}

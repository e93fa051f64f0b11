import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addVerbs } from '../kit.js';

/** `facectl auth ...`: declared with commander only; each verb module loads when its command runs. */
export function registerAuth(program: Command, ctx: Context): void {
  const auth = program.command('auth').description('Log in with an API key, log out, show which key is used.');
  addVerbs(auth, ctx, {
    login: {
      description:
        'Store an API key in the active profile after checking it with the service.\n' +
        'The key is asked for on a terminal (hidden), or read from standard input with --api-key-stdin;\n' +
        'never pass it as an argument. --base-url, when given, is stored with it.',
      examples: [
        'facectl auth login',
        'printenv FACECTL_KEY | facectl auth login --api-key-stdin --base-url https://api.example.com',
        'facectl auth login --profile work',
      ],
      run: async () => (await import('./login.js')).runLogin,
    },
    logout: {
      description: 'Remove the stored API key from the active profile (other settings stay).',
      examples: ['facectl auth logout', 'facectl auth logout --profile work'],
      run: async () => (await import('./logout.js')).runLogout,
    },
    status: {
      description:
        'Show the base URL and where it came from, the profile, the key prefix and where the key came from,\n' +
        'and what the service says about the key: expiry, scopes, plan, budget left. Uses an endpoint the\n' +
        'published interface does not show (GET /v1/auth/api-keys/current).',
      examples: [
        'facectl auth status',
        'facectl auth status --json | jq .key_source',
        'FACECTL_API_KEY=fcs_... facectl auth status',
      ],
      run: async () => (await import('./status.js')).statusAction,
    },
    token: {
      description:
        'Print the API key facectl would send to the current base URL, for other tools. A stored key is\n' +
        'printed only for the base URL it was saved with. Warns first when standard output is a terminal.',
      examples: [
        'curl -H "Authorization: Bearer $(facectl auth token)" http://127.0.0.1:8787/v1/auth/api-keys/current',
        'facectl auth token --profile work | other-tool --api-key-stdin',
      ],
      run: async () => (await import('./token.js')).tokenAction,
    },
    switch: {
      description: 'Make an existing profile the default one (sets default_profile); unknown profiles are refused.',
      arguments: [['<profile>', 'the name of a profile in the configuration file']],
      examples: ['facectl auth switch work', 'facectl auth switch default'],
      run: async () => (await import('./switch.js')).switchAction,
    },
  });
}

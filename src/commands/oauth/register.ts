import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addVerbs } from '../kit.js';

/** `facectl oauth ...`: declared with commander only; the verb modules load when a command runs. */
export function registerOAuthCommands(program: Command, ctx: Context): void {
  const oauth = program
    .command('oauth')
    .summary('Connect an external provider account (Connect plan)')
    .description(
      'Connect an external provider account so compile interviews are billed to it.\n\n' +
        'OAuth connections are only for the Connect plan: keys of Free, Standard and Pro users are refused ' +
        '(403 plan_required, exit 6).',
    );
  addVerbs(oauth, ctx, {
    list: {
      description: "List the OAuth connections of the key's user.",
      examples: ['facectl oauth list', "facectl oauth list --json | jq '.[] | select(.connected)'"],
      run: async () => (await import('./list.js')).runListConnections,
    },
    connect: {
      summary: 'Connect a provider in the browser',
      description:
        'Connect a provider: prints the authorize URL on stderr at once (with --json as one JSON line, ' +
        '{"authorize_url": ...}), opens it in a browser (unless --no-browser, SSH, CI or no display), then waits ' +
        'until the approval arrives (--timeout, default 300 s; Ctrl-C stops). A provider connected already: ' +
        'says so and exits 0.',
      arguments: [['<provider>', 'the provider id (the local service offers `example`)']],
      options: [
        ['--no-browser', 'do not open a browser; open the printed URL yourself (e.g. on another device)'],
        ['--timeout <seconds>', 'give up waiting after this many seconds (default 300)'],
      ],
      examples: ['facectl oauth connect example', 'facectl oauth connect example --no-browser --timeout 600'],
      run: async () => (await import('./connect.js')).connectAction,
    },
    disconnect: {
      description: 'Disconnect a provider. Asks for confirmation on a terminal; scripts pass --yes.',
      arguments: [['<provider>', 'the provider id']],
      options: [['-y, --yes', 'do not ask for confirmation']],
      examples: ['facectl oauth disconnect example', 'facectl oauth disconnect example --yes --no-input'],
      run: async () => (await import('./disconnect.js')).disconnectAction,
    },
  });
}

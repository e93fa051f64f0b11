import { Command, Option } from 'commander';
import type { Context } from './context.js';

/**
 * The command tree. Only commander is imported here, so `--version` and `--help` stay cheap: every
 * action imports its verb module when it runs.
 */

export const VERSION = '0.1.0';

export function buildProgram(ctx: Context): Command {
  const program = new Command('facectl')
    .description('Manage faces and compile material on the Face Compilation Service.')
    .version(VERSION, '-V, --version', 'print the version')
    .configureOutput({
      writeOut: (text) => ctx.io.stdout.write(text),
      writeErr: (text) => ctx.io.stderr.write(text),
    })
    .exitOverride()
    .showSuggestionAfterError(true);

  program
    .command('serve')
    .description('Run the local Face Compilation Service (stateful, for offline use, scripts and CI).')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free one)', '8787')
    .option('--data <file>', 'load state from FILE at start and save every change to it')
    .option('--json', 'print the base URL and bootstrap keys as one JSON object on the first stdout line')
    .option('--allow-private-urls', 'let import fetch loopback URLs (local testing only)')
    .option('--oauth-provider <name>', 'id of the local OAuth provider', 'example')
    .addOption(new Option('--rate-limit <n>', 'requests per second per key (429 with Retry-After past it)'))
    .action(async (opts: Record<string, unknown>) => {
      const { runServe } = await import('./commands/serve.js');
      await runServe(ctx, opts);
    });

  program
    .command('openapi')
    .description('Print the OpenAPI 3.1 document generated from the interface contract.')
    .action(async () => {
      const { runOpenApi } = await import('./commands/openapi.js');
      await runOpenApi(ctx);
    });

  return program;
}

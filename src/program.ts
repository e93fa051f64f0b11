import { Argument, Command, Option } from 'commander';
import { registerAuth } from './commands/auth/register.js';
import { registerConfig } from './commands/config/register.js';
import { registerDocsCommands } from './commands/docs/register.js';
import { registerDoctor } from './commands/doctor/register.js';
import { registerFacesCommands, registerImportCommand } from './commands/faces/register.js';
import { registerKeysCommands } from './commands/keys/register.js';
import { addExamples, applyGlobalOptions, lazyAction } from './commands/kit.js';
import { registerOAuthCommands } from './commands/oauth/register.js';
import { registerThreadsCommands } from './commands/threads/register.js';
import type { Context } from './context.js';
import { VERSION } from './version.js';

/**
 * The command tree. Only commander and the small register modules are imported here, so `--version`
 * and `--help` stay cheap: every action imports its verb module when it runs (kit.lazyAction).
 *
 * To add a command group: write `src/commands/<group>/register.ts` exporting
 * `register<Group>(program, ctx)` (commander + kit only, no other imports), import it below and call it
 * in the list of groups. Global flags are defined once, here; verbs must not redefine them.
 */

export { VERSION } from './version.js';

export function buildProgram(ctx: Context): Command {
  const program = new Command('facectl')
    .description('Manage faces and compile material on the Face Compilation Service.')
    .version(VERSION, '-V, --version', 'print the version')
    .option('--base-url <url>', 'service base URL (else FACECTL_BASE_URL, the profile, http://127.0.0.1:8787)')
    .option('--profile <name>', 'configuration profile to use (else FACECTL_PROFILE, default_profile)')
    .option('--json', 'print one JSON document on stdout; errors also as a JSON line on stderr')
    .option('--no-input', 'never prompt: a missing value is an error naming its flag')
    .option('--debug', 'trace HTTP exchanges on stderr (Authorization redacted) and show stack traces')
    .option('--insecure-http', 'allow plain http to hosts other than loopback')
    .option('--api-key-stdin', 'read the API key from the first line of standard input')
    .showSuggestionAfterError(true);

  // Global flags may be written before or after the subcommand; commander parses them on the program
  // wherever they are, and this hook copies them into ctx.globals before any action runs.
  program.hook('preAction', (_program, action) => applyGlobalOptions(ctx, action.optsWithGlobals()));

  addExamples(program, [
    'facectl auth login',
    'facectl faces create --name "Ada Lovelace" --alias ada-lovelace',
    'cat notes.md | facectl docs submit --alias ada-lovelace --label notes -',
  ]);

  const serve = program
    .command('serve')
    .description('Run the local Face Compilation Service (stateful, for offline use, scripts and CI).')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free one)', '8787')
    .option('--data <file>', 'load state from FILE at start and save every change to it')
    .option('--allow-private-urls', 'let import fetch loopback URLs (local testing only)')
    .option('--oauth-provider <name>', 'id of the local OAuth provider', 'example')
    .addOption(new Option('--rate-limit <n>', 'requests per second per key (429 with Retry-After past it)'))
    .action(async (opts: Record<string, unknown>) => {
      const { runServe } = await import('./commands/serve.js');
      // --json is a global flag: commander hands it to the program, so pass it on explicitly.
      await runServe(ctx, { ...opts, json: ctx.globals.json });
    });
  addExamples(serve, [
    'facectl serve',
    'facectl serve --port 0 --json',
    'facectl serve --data state.json --rate-limit 20',
  ]);

  const openapi = program
    .command('openapi')
    .description('Print the OpenAPI 3.1 document generated from the interface contract.')
    .action(async () => {
      const { runOpenApi } = await import('./commands/openapi.js');
      await runOpenApi(ctx);
    });
  addExamples(openapi, ['facectl openapi > openapi.json', 'facectl openapi | jq ".paths | keys"']);

  // Command groups, in the order `facectl --help` lists them.
  registerKeysCommands(program, ctx);
  registerFacesCommands(program, ctx);
  registerImportCommand(program, ctx);
  registerDocsCommands(program, ctx);
  registerThreadsCommands(program, ctx);
  registerOAuthCommands(program, ctx);
  registerAuth(program, ctx);
  registerConfig(program, ctx);
  registerDoctor(program, ctx);
  registerApi(program, ctx);
  registerCompletion(program, ctx);

  configureTree(program, ctx);
  return program;
}

function registerApi(program: Command, ctx: Context): void {
  const api = program
    .command('api')
    .description('Send a request to any endpoint; known paths are validated against the contract.')
    .argument('<method>', 'GET, POST, PATCH or DELETE')
    .argument('<path>', 'path under the base URL, e.g. /v1/faces/ada-lovelace')
    .option('--input <file>', 'request body: a JSON file, or - for standard input')
    .action(lazyAction(ctx, async () => (await import('./commands/api.js')).apiAction));
  addExamples(api, [
    'facectl api GET /v1/auth/api-keys/current',
    'facectl api POST /v1/faces --input face.json',
    'echo \'{"messages": []}\' | facectl api PATCH /v1/compile/threads/thr_123/messages --input -',
  ]);
}

function registerCompletion(program: Command, ctx: Context): void {
  const completion = program
    .command('completion')
    .description('Print a shell completion script generated from the command tree.')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .action(async (shell: string) => {
      const { runCompletion } = await import('./commands/completion.js');
      await runCompletion(ctx, program, shell as 'bash' | 'zsh' | 'fish');
    });
  addExamples(completion, [
    'facectl completion bash > ~/.local/share/bash-completion/completions/facectl',
    'facectl completion zsh > ~/.zfunc/_facectl   # with fpath=(~/.zfunc $fpath) in ~/.zshrc',
    'facectl completion fish > ~/.config/fish/completions/facectl.fish',
  ]);
}

/**
 * Settings every command needs, applied after the tree is built so groups created with `new Command()`
 * get them too: errors throw (main.ts decides the exit code), output goes to the context's streams,
 * and a usage error ends with the command's usage line.
 */
function configureTree(command: Command, ctx: Context): void {
  command
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void ctx.io.stdout.write(text),
      writeErr: (text) => void ctx.io.stderr.write(text),
      outputError: (text, write) => write(text),
    })
    .showHelpAfterError(
      `usage: ${commandPath(command)} ${command.usage()}\nrun \`${commandPath(command)} --help\` for details`,
    );
  for (const sub of command.commands) configureTree(sub, ctx);
}

export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

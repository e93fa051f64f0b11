import { Argument, Command, Option } from 'commander';
import { registerAuth } from './commands/auth/register.js';
import { registerConfig } from './commands/config/register.js';
import { registerDocsCommands } from './commands/docs/register.js';
import { registerDoctor } from './commands/doctor/register.js';
import { registerFacesCommands, registerImportCommand } from './commands/faces/register.js';
import { registerKeysCommands } from './commands/keys/register.js';
import { addExamples, lazyAction } from './commands/kit.js';
import { registerOAuthCommands } from './commands/oauth/register.js';
import { registerThreadsCommands } from './commands/threads/register.js';
import type { Context } from './context.js';
import { GLOBAL_FLAGS } from './global-flags.js';
import { formatHelp } from './help-format.js';
import { VERSION } from './version.js';

/**
 * The command tree. Only commander and the small register modules are imported here, so a command
 * line is parsed cheaply: every action imports its verb module when it runs (kit.lazyAction).
 * `--version` and `--help` do not get here at all (cli.ts answers them; the help pages are rendered
 * from this tree at build time, see help-pages.ts), except `--help` on a terminal not 80 columns wide.
 *
 * To add a command group: write `src/commands/<group>/register.ts` exporting
 * `register<Group>(program, ctx)` (commander + kit only, no other imports) that declares exactly one
 * top-level command, import it below and add it to TOP_LEVEL. Global flags are declared here from
 * global-flags.ts's table (for help and completion); verbs must not redefine them. main.ts takes them off the line before commander
 * parses it (global-flags.ts), so the tree built here never sees them.
 */

export { VERSION } from './version.js';

/** A top-level command and the function that declares it (with its subcommands). */
type TopLevel = readonly [name: string, register: (program: Command, ctx: Context) => void];

/** The top-level commands, in the order `facectl --help` lists them. */
const TOP_LEVEL: readonly TopLevel[] = [
  ['serve', registerServe],
  ['openapi', registerOpenApi],
  ['keys', registerKeysCommands],
  ['faces', registerFacesCommands],
  ['import', registerImportCommand],
  ['docs', registerDocsCommands],
  ['threads', registerThreadsCommands],
  ['oauth', registerOAuthCommands],
  ['auth', registerAuth],
  ['config', registerConfig],
  ['doctor', registerDoctor],
  ['api', registerApi],
  ['completion', registerCompletion],
];

/** Commands that read the whole tree when they run. */
const NEEDS_WHOLE_TREE = new Set(['completion']);

/** The top-level names, for tests that check each entry of the table declares exactly its own command. */
export const TOP_LEVEL_NAMES: readonly string[] = TOP_LEVEL.map(([name]) => name);

/**
 * The command tree. With `argv`, only the top-level command the line names is declared (with all its
 * subcommands): an API command then does not build the other ~40 commands it cannot reach. Whenever
 * the line does not plainly name one (help, a typo that deserves a suggestion, an unknown flag before
 * the command), the whole tree is built, so commander answers exactly as it would with everything.
 */
export function buildProgram(ctx: Context, argv?: readonly string[]): Command {
  const program = new Command('facectl')
    .description('Manage faces and compile material on the Face Compilation Service.')
    .version(VERSION, '-V, --version', 'print the version')
    .showSuggestionAfterError(true);
  for (const { flag, value, help } of GLOBAL_FLAGS) program.option(value ? `${flag} ${value}` : flag, help);

  addExamples(program, [
    'facectl auth login',
    'facectl faces create --name "Ada Lovelace" --alias ada-lovelace',
    'cat notes.md | facectl docs submit --alias ada-lovelace --label notes -',
  ]);

  const selected = argv ? namedCommand(argv) : undefined;
  for (const [name, register] of TOP_LEVEL) if (selected === undefined || name === selected) register(program, ctx);
  if (argv?.[0] === 'help' && argv.some((word) => word === '--help' || word === '-h')) registerHelpPage(program);

  configureTree(program, ctx);
  return program;
}

/**
 * The top-level command a command line (without its global flags) names, when that is certain: the
 * first word, if it names a command of the table that does not need the whole tree. A flag first
 * (`--help`, `--`, an unknown one) gives undefined: build everything.
 */
export function namedCommand(argv: readonly string[]): string | undefined {
  const word = argv[0];
  if (word === undefined || word.startsWith('-')) return undefined;
  const known = TOP_LEVEL.some(([name]) => name === word);
  return known && !NEEDS_WHOLE_TREE.has(word) ? word : undefined;
}

function registerServe(program: Command, ctx: Context): void {
  const serve = program
    .command('serve')
    .description('Run the local Face Compilation Service (stateful, for offline use, scripts and CI).')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free one)', '8787')
    .option('--data <file>', 'load state from FILE at start and save every change to it')
    .option('--allow-private-urls', 'let import fetch loopback URLs (local testing only)')
    .option('--oauth-provider <name>', 'id of the local OAuth provider', 'example')
    .addOption(new Option('--rate-limit <n>', 'requests per second per key (429 with Retry-After past it)'))
    .option(
      '--consent <answer>',
      'who answers OAuth consent: page (a person, in a browser), approve or deny (serve, at once: for scripts and CI)',
      'page',
    )
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
}

function registerOpenApi(program: Command, ctx: Context): void {
  const openapi = program
    .command('openapi')
    .description('Print the OpenAPI 3.1 document generated from the interface contract.')
    .action(lazyAction(ctx, async () => (await import('./commands/openapi.js')).runOpenApi));
  addExamples(openapi, ['facectl openapi > openapi.json', 'facectl openapi | jq ".paths | keys"']);
}

function registerApi(program: Command, ctx: Context): void {
  const many = (value: string, previous: string[] = []) => [...previous, value];
  const api = program
    .command('api')
    .description('Send a request to any endpoint; known paths are validated against the contract.')
    .argument('<method-or-path>', 'GET, POST, PATCH, DELETE... (or give -X), or the path when the method is left out')
    .argument('[path]', 'path under the base URL (query string kept), e.g. /v1/faces/ada-lovelace')
    .option('-X, --method <method>', 'the HTTP method (default GET, or POST with a body or fields)')
    .option('-H, --header <header>', "add a request header 'Name: value' (repeatable)", many)
    .option('-f, --raw-field <key=value>', 'add a string field to the JSON body, or to the query of a GET', many)
    .option('-F, --field <key=value>', 'add a typed field: true/false/null/integers as JSON, @file reads a file', many)
    .option('--input <file>', 'request body: a file, or - for standard input')
    .option('-i, --include', 'print the status line and the response headers before the body')
    .option('--raw', 'no contract checks: send as given, print the answer as received')
    .action(lazyAction(ctx, async () => (await import('./commands/api.js')).apiAction));
  addExamples(api, [
    'facectl api /v1/auth/api-keys/current',
    'facectl api -X POST /v1/faces -f name=Ada -f alias=ada',
    "facectl api -i GET '/v1/faces/ada?fields=name'",
    'echo \'{"messages": []}\' | facectl api PATCH /v1/compile/threads/thr_123/messages --input -',
  ]);
}

/**
 * `help` as a command of its own, for its page only (`facectl help help`, `facectl help --help`): every
 * other `help` line is rewritten by help-topics.ts before commander parses it. Hidden: the program's
 * page lists `help` already.
 */
function registerHelpPage(program: Command): void {
  const help = new Command('help')
    .description(
      'Show help for a command: `facectl help A B` prints the same as `facectl A B --help`; ' +
        '`facectl help` alone lists the commands. An unknown command is an error (exit 2) with a suggestion.',
    )
    .argument('[command...]', 'the command, and its subcommand, to show help for');
  addExamples(help, ['facectl help', 'facectl help docs submit']);
  program.addCommand(help, { hidden: true });
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
      // Under --json main.ts writes the one JSON error document; commander's lines would come before it.
      writeErr: (text) => void (ctx.globals.json ? undefined : ctx.io.stderr.write(text)),
      outputError: (text, write) => write(text),
      // Help wraps to the width of the stream it goes to (commander's default reads process.stdout).
      getOutHelpWidth: () => helpWidth(ctx.io.stdout, ctx.io.stdoutIsTTY),
      getErrHelpWidth: () => helpWidth(ctx.io.stderr, ctx.io.stderrIsTTY),
    })
    .configureHelp({ formatHelp })
    .showHelpAfterError(
      `usage: ${commandPath(command)} ${command.usage()}\nrun \`${commandPath(command)} --help\` for details`,
    );
  for (const sub of command.commands) configureTree(sub, ctx);
}

/**
 * The width help is wrapped to: a terminal's columns, else 80 (what commander does for process.stdout).
 * cli.ts prints the help pages made at build time only when this is 80.
 */
export function helpWidth(stream: { columns?: number }, isTTY: boolean): number {
  return isTTY && stream.columns !== undefined ? stream.columns : 80;
}

export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

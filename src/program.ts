import { Argument, Command, Help, type HelpContext, Option } from 'commander';
import { declarationOf, declare, withExamples } from './commands/declare.js';
import type { AnyVerb, GroupSpec } from './commands/verb.js';
import type { Context, GlobalOptions } from './context.js';
import { UsageError, withoutKeys } from './errors.js';
import { JQ_OPTION, jqOptionError, refuseJqOption } from './io/jq.js';
import { VERSION } from './version.js';

/** The program's options: commander reads them wherever they stand (before `--`) into ctx.globals. */
const GLOBAL_FLAGS: readonly (readonly [flags: string, key: keyof GlobalOptions, help: string])[] = [
  ['--base-url <url>', 'baseUrl', 'service base URL (else FACECTL_BASE_URL, the profile, http://127.0.0.1:8787)'],
  ['--profile <name>', 'profile', 'configuration profile to use (else FACECTL_PROFILE, default_profile)'],
  ['--json', 'json', 'print one JSON document on stdout; an error is one JSON document on stderr'],
  ['--jq <expression>', 'jq', 'filter the JSON output with a jq expression (implies --json)'],
  ['--no-input', 'noInput', 'never prompt: a missing value is an error naming its flag'],
  ['--debug', 'debug', 'trace HTTP exchanges on stderr (Authorization redacted) and show stack traces'],
  ['--insecure-http', 'insecureHttp', 'allow plain http to hosts other than loopback'],
  ['--api-key-stdin', 'apiKeyStdin', 'read the API key from the first line of standard input'],
];

/** The top-level commands, in the order `facectl --help` lists them; `completion` and `help`, made here, last. */
const TOP_LEVEL: readonly (readonly [name: string, load: () => Promise<{ default: AnyVerb | GroupSpec }>])[] = [
  ['serve', () => import('./commands/serve.js')],
  ['openapi', () => import('./commands/openapi.js')],
  ['keys', () => import('./commands/keys/index.js')],
  ['faces', () => import('./commands/faces/index.js')],
  ['import', () => import('./commands/import.js')],
  ['docs', () => import('./commands/docs/index.js')],
  ['threads', () => import('./commands/threads/index.js')],
  ['oauth', () => import('./commands/oauth/index.js')],
  ['auth', () => import('./commands/auth/index.js')],
  ['config', () => import('./commands/config/index.js')],
  ['doctor', () => import('./commands/doctor/doctor.js')],
  ['api', () => import('./commands/api.js')],
];

export const TOP_LEVEL_NAMES: readonly string[] = [...TOP_LEVEL.map(([name]) => name), 'completion', 'help'];

/** Only the top-level command the line names is declared (not ~40 verbs); another line (help, a typo) gets them all. */
export async function buildProgram(ctx: Context, argv: readonly string[] = []): Promise<Command> {
  const program = new FacectlCommand('facectl')
    .description('Manage faces and compile material on the Face Compilation Service.')
    .version(VERSION, '-V, --version', 'print the version');
  for (const [flags, key, help] of GLOBAL_FLAGS) {
    const option = new Option(flags, help);
    program.addOption(option).on(`option:${option.name()}`, (value?: string) => {
      Object.assign(ctx.globals, { [key]: value ?? true }, key === 'jq' ? { json: true } : {});
      if (key === 'jq') refuseJqOption(value as string);
    });
  }
  withExamples(program, [
    'facectl auth login',
    'facectl faces create --name "Ada Lovelace" --alias ada-lovelace',
    'cat notes.md | facectl docs submit --alias ada-lovelace --label notes -',
  ]);
  const named = TOP_LEVEL.find(([name]) => name === argv[0]);
  const loaded = await Promise.all(
    (named ? [named] : TOP_LEVEL).map(async ([name, load]) => [name, (await load()).default] as const),
  );
  for (const [name, spec] of loaded) declare(program, name, spec, ctx);
  // `completion` and `help` read the whole tree, so a line they start builds it all.
  if (!named) {
    registerCompletion(program, ctx);
    registerHelp(program);
  }
  configureTree(program, ctx);
  return program;
}

/** commander's Command with facectl's answers where a line cannot run (docs/decisions.md: the `Command` subclass). */
class FacectlCommand extends Command {
  /** The words this command parsed, to name a flag as it was typed. */
  private words: readonly string[] = [];

  override createCommand(name?: string): Command {
    return new FacectlCommand(name);
  }

  override parseOptions(argv: string[]) {
    this.words = argv;
    return super.parseOptions(argv);
  }

  override help(context?: HelpContext | ((text: string) => string)): never {
    const missingCommand = typeof context === 'object' && context.error === true && this.commands.length > 0;
    return missingCommand ? super.help() : super.help(context as HelpContext);
  }

  /** commander's hook for a value flag that ends this command's words (a global flag may follow it on the line). */
  optionMissingArgument(option: Option): never {
    const typed = this.words.at(-1) ?? option.flags;
    const line = this.line();
    const at = line.lastIndexOf(typed);
    throw needsValue(typed, at < 0 ? undefined : line[at + 1], option);
  }

  /** commander's hook for an unknown flag; one that looks like a key's says where keys come from (none on the line). */
  unknownOption(flag: string): never {
    if (SECRET_FLAG.test(flag)) {
      throw new UsageError(`${flag.split('=')[0]}: facectl takes no API key on the command line`, {
        hint:
          'a key comes from FACECTL_API_KEY, or from standard input with --api-key-stdin ' +
          '(e.g. `printenv <VARIABLE> | facectl auth login --api-key-stdin`); a flag would leave it in shell history',
      });
    }
    if (JQ_OPTION.test(flag) && this.line().some((word) => word === '--jq' || word.startsWith('--jq='))) {
      throw jqOptionError(`${flag} is an option of jq, not of facectl`, flag);
    }
    const commanders = Command.prototype as unknown as { unknownOption(this: Command, flag: string): never };
    return commanders.unknownOption.call(this, flag);
  }

  /** commander's way out of a line it cannot run: gh's `--json name,uid` field list is named as such. */
  override error(message: string, options?: { code?: string; exitCode?: number }): never {
    const line = this.line();
    const list = line.findIndex((word, i) => word === '--json' && /^[\w.]+(,[\w.]+)*$/.test(line[i + 1] ?? ''));
    if (options?.code === 'commander.excessArguments' && list >= 0 && this.args.includes(line[list + 1] as string)) {
      throw new UsageError(`--json takes no list of fields (${line[list + 1]} is read as an argument)`, {
        hint: `--json prints every field; to pick some, use --jq, e.g. --jq '{${line[list + 1]}}'`,
      });
    }
    return super.error(message, options);
  }

  /** The words of the whole line as typed (the top command's). */
  private line(): readonly string[] {
    const top = (command: Command): Command => (command.parent ? top(command.parent) : command);
    const root = top(this);
    return root instanceof FacectlCommand ? root.words : this.words;
  }

  /** commander's hook before --help: `facectl nosuch --help` is an unknown command (as gh says), not a group's help. */
  _outputHelpIfRequested(args: string[]): void {
    const helpAsked = args.some((arg) => arg === '--help' || arg === '-h');
    if (helpAsked && this.commands.length > 0 && this.args.some((arg) => !arg.startsWith('-'))) this.unknownCommand();
    const commanders = Command.prototype as unknown as { _outputHelpIfRequested(this: Command, args: string[]): void };
    commanders._outputHelpIfRequested.call(this, args);
  }

  /** commander's hook for a word that names no command of this group. */
  unknownCommand(): never {
    const word = String(this.args[0]);
    const near = closestName(word, this.commands) ?? this.verbNamed(word);
    this.error(`error: unknown command '${word}'${near ? `\n(Did you mean ${near}?)` : ''}`, {
      code: 'commander.unknownCommand',
    });
  }

  /** At the top, a verb of a group: `facectl login` is `facectl auth login`. */
  private verbNamed(word: string): string | undefined {
    if (this.parent) return undefined;
    const group = this.commands.find((command) => command.commands.some((verb) => verb.name() === word));
    return group ? `${group.name()} ${word}` : undefined;
  }

  /** `--label --content hi` is a missing label, not the label "--content" (written `--label=--content`). */
  checkedValue(option: Option, value: string): string {
    // The whole line: a global flag right after this one (`--label --json`) was taken out before this command parsed.
    const line = this.line();
    const at = line.findIndex((word, i) => {
      const next = line[i + 1];
      if (word !== option.long && word !== option.short) return false;
      // Its value is that flag, a flag after it, or the word after a global flag taken out (`--label --json -`).
      return next !== undefined && this.isFlag(next) && (next === value || this.isFlag(value) || line[i + 2] === value);
    });
    if (at >= 0) throw needsValue(line[at] as string, line[at + 1], option);
    return value;
  }

  /** A flag of this command or of those above it; at the top, of any command (its flags stand anywhere). */
  private isFlag(word: string): boolean {
    const name = word.startsWith('--') ? word.split('=', 1)[0] : word;
    if (name === '--help' || name === '-h') return true;
    const below = (command: Command): Command[] => [command, ...command.commands.flatMap(below)];
    const above = (command: Command): Command[] => [command, ...(command.parent ? above(command.parent) : [])];
    const commands = this.parent ? above(this) : below(this);
    return commands.some((command) => command.options.some((option) => option.long === name || option.short === name));
  }
}

/** Flags a key might be given with (`--api-key KEY`, `--token=KEY`). */
const SECRET_FLAG = /^--(?:api[-_]?key|key|token)(?:=|$)/i;

function needsValue(typed: string, next: string | undefined, option: Option): UsageError {
  const long = option.long ?? typed;
  const hint =
    next === undefined
      ? `${typed} ends the line, with nothing after it for its value; write ${long} ${/<([^>]+)>/.exec(option.flags)?.[1]?.toUpperCase()}`
      : `${next} is a flag, not the value of ${typed}; to give a value spelled like a flag, write ${long}=${next}`;
  return new UsageError(`${typed} needs a value`, { hint });
}

/** How help pages read, on commander's layout: "flags" as gh says, choices and defaults plainly. */
const HELP = {
  showGlobalOptions: true,
  // On a narrow terminal flag descriptions are still wrapped to it (commander stops below 40 columns).
  minWidthToWrap: 20,
  /** Under 20 columns left beside the terms (a page of long flags at 40 columns): each description goes under its term. */
  formatItem(this: Help, term: string, termWidth: number, description: string, helper: Help): string {
    const width = this.helpWidth ?? 80;
    if (!description || width - termWidth - 4 >= 20)
      return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
    return `  ${term}\n${helper.boxWrap(description, width - 6).replace(/^/gm, '      ')}`;
  },
  styleTitle: (title: string) => ({ 'Options:': 'Flags:', 'Global Options:': 'Global flags:' })[title] ?? title,
  subcommandTerm: (command: Command) => command.name(),
  optionDescription: (option: Option) => {
    const declared = declarationOf(option);
    const extra = [
      ...(declared?.choices ? [`one of: ${declared.choices.join(', ')}`] : []),
      ...(declared?.min !== undefined && declared.type === 'int' ? [`${declared.min} to ${declared.max}`] : []),
      ...(option.required && option.defaultValue !== undefined ? [`default: ${option.defaultValueDescription}`] : []),
    ];
    return extra.length > 0 ? `${option.description} (${extra.join('; ')})` : option.description;
  },
};

/** Once the tree is built: errors throw (main.ts decides the exit code), output goes to the context's streams. */
function configureTree(command: Command, ctx: Context, path = command.name()): void {
  if (!command.summary()) command.summary(firstSentence(command.description()));
  command
    .exitOverride()
    .helpCommand(false)
    .usage(command.usage().replace('[options]', '[flags]'))
    .configureOutput({
      writeOut: (text) => void ctx.io.stdout.write(text),
      // Under --json main.ts writes the one JSON error document; commander's lines would come before it.
      writeErr: (text) => void (ctx.globals.json ? undefined : ctx.io.stderr.write(withoutKeys(text))),
      // Help wraps to the width of the stream it goes to (commander's default reads process.stdout).
      getOutHelpWidth: () => helpWidth(ctx.io.stdout, ctx.io.stdoutIsTTY),
      getErrHelpWidth: () => helpWidth(ctx.io.stderr, ctx.io.stderrIsTTY),
    })
    .configureHelp(HELP)
    .showHelpAfterError(`usage: ${path} ${command.usage()}\nrun \`${path} --help\` for details`);
  for (const option of command.options.filter((o) => o.required)) {
    const parse = option.parseArg;
    option.argParser((value: string, previous: unknown) => {
      const given = (command as FacectlCommand).checkedValue(option, value);
      return parse ? parse(given, previous) : given;
    });
  }
  for (const sub of command.commands) configureTree(sub, ctx, `${path} ${sub.name()}`);
}

/** A terminal's columns, else 80 (as commander does for process.stdout); cli.ts prints prebuilt pages at 80 only. */
const helpWidth = (stream: { columns?: number }, isTTY: boolean) =>
  isTTY && stream.columns !== undefined ? stream.columns : 80;

function firstSentence(description: string): string {
  const paragraph = (description.split(/\n\s*\n/)[0] ?? '').replace(/\s*\n\s*/g, ' ').trim();
  const sentence = (/^(.+?)\.(\s|$)/.exec(paragraph)?.[1] ?? paragraph).replace(/\.$/, '');
  // A long first sentence that explains after a colon: the part before it.
  return sentence.length > 72 && sentence.includes(': ') ? sentence.slice(0, sentence.indexOf(': ')) : sentence;
}

function registerHelp(program: Command): void {
  const help = program
    .command('help')
    .description(
      'Show help for a command: `facectl help A B` prints the same as `facectl A B --help`; `facectl help` ' +
        'alone lists the commands. An unknown command is an error (exit 2) with a suggestion.',
    )
    .argument('[command...]', 'the command, and its subcommand, to show help for')
    .action((words: string[]) => {
      let topic: Command = program;
      for (const [i, word] of words.entries()) {
        const next = topic.commands.find((command) => command.name() === word);
        if (!next) {
          const near = closestName(word, topic.commands);
          const prefix = words.slice(0, i).join(' ');
          throw new UsageError(`unknown help topic "${words.slice(0, i + 1).join(' ')}"`, {
            hint: near
              ? `did you mean \`facectl help ${prefix ? `${prefix} ` : ''}${near}\`?`
              : `run \`facectl help${prefix ? ` ${prefix}` : ''}\` for the list of commands`,
          });
        }
        topic = next;
      }
      topic.help();
    });
  withExamples(help, ['facectl help', 'facectl help docs submit']);
}

function registerCompletion(program: Command, ctx: Context): void {
  const completion = program
    .command('completion')
    .description('Print a shell completion script generated from the command tree.')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .action(async (shell: 'bash' | 'zsh' | 'fish') => {
      ctx.out.text((await import('./commands/completion.js')).generateCompletion(program, shell));
    });
  withExamples(completion, [
    'facectl completion bash > ~/.local/share/bash-completion/completions/facectl',
    "echo 'source <(facectl completion bash)' >> ~/.bashrc   # bash without the bash-completion package",
    'facectl completion zsh > ~/.zfunc/_facectl   # with fpath=(~/.zfunc $fpath) in ~/.zshrc',
    'facectl completion fish > ~/.config/fish/completions/facectl.fish',
  ]);
}

/** The command closest to a mistyped `word`: within 2 edits (a third of a long word's length), or beginning with it. */
function closestName(word: string, commands: readonly Command[]): string | undefined {
  return commands
    .map((command) => ({ name: command.name(), distance: distance(command.name(), word) }))
    .filter((c) => c.distance <= Math.max(2, Math.floor(word.length / 3)) || c.name.startsWith(word))
    .sort((a, b) => a.distance - b.distance)[0]?.name;
}

function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      next[j] = Math.min((row[j] as number) + 1, (next[j - 1] as number) + 1, (row[j - 1] as number) + cost);
    }
    row = next;
  }
  return row[b.length] as number;
}

import type { Argument, Command, Help, Option } from 'commander';

/**
 * The layout of every `--help` page, in the shape gh users know: the description, USAGE, the
 * command's ARGUMENTS and own FLAGS, INHERITED FLAGS (the global ones), COMMANDS for a group,
 * EXAMPLES on every page (a group without its own shows its subcommands' first examples) and LEARN
 * MORE. Paragraphs are reflowed and wrapped to the help width (the terminal's, else 80); indented
 * lines (tables, lists) are kept as written. Plain code over commander's types: program.ts stays cheap.
 */

const EXAMPLES = Symbol('facectl.examples');
type WithExamples = Command & { [EXAMPLES]?: string[] };

/** Records a command's examples (each one shell line), shown under EXAMPLES. */
export function setExamples(cmd: Command, examples: string[]): void {
  (cmd as WithExamples)[EXAMPLES] = examples;
}

/** A command's own examples; for a group without any, the first example of each subcommand. */
export function examplesOf(cmd: Command): string[] {
  const own = (cmd as WithExamples)[EXAMPLES];
  if (own && own.length > 0) return own;
  return cmd.commands.flatMap((sub) => (sub as WithExamples)[EXAMPLES]?.slice(0, 1) ?? []);
}

/** The first sentence or line of a description, for a command list. */
export function summaryOf(cmd: Command): string {
  const summary = cmd.summary();
  if (summary) return summary;
  const first = (cmd.description().split(/\n\s*\n/)[0] ?? '').replace(/\s*\n\s*/g, ' ').trim();
  const sentence = /^(.+?\.)(\s|$)/.exec(first);
  const line = (sentence?.[1] ?? first).replace(/\.$/, '');
  // A long first sentence that explains after a colon: the part before it.
  return line.length > 72 && line.includes(': ') ? line.slice(0, line.indexOf(': ')) : line;
}

function fullPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Wraps one paragraph of words to `width` columns, each line starting with `indent`. */
export function wrap(text: string, width: number, indent = ''): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '' || lines.length === 0) lines.push(indent + line);
  return lines;
}

/** A description's paragraphs reflowed; paragraphs whose lines are indented are kept as written. */
export function reflow(text: string, width: number): string[] {
  const out: string[] = [];
  for (const paragraph of text.trim().split(/\n\s*\n/)) {
    if (out.length > 0) out.push('');
    const lines = paragraph.split('\n');
    if (lines.some((line) => /^\s/.test(line))) out.push(...lines.map((line) => line.trimEnd()));
    else out.push(...wrap(paragraph, width));
  }
  return out;
}

/** A two-column list: terms, then their descriptions wrapped beside them (or below a long term). */
function itemList(items: [term: string, description: string][], width: number): string[] {
  const termWidth = Math.min(Math.max(0, ...items.map(([term]) => term.length)), Math.floor(width / 2.5));
  const column = 2 + termWidth + 3;
  const out: string[] = [];
  for (const [term, description] of items) {
    const text = wrap(description, Math.max(width, column + 20), ' '.repeat(column));
    if (term.length > termWidth) {
      out.push(`  ${term}`);
      if (description !== '') out.push(...text);
    } else {
      out.push(`  ${term.padEnd(termWidth)}   ${(text[0] ?? '').trimStart()}`.trimEnd(), ...text.slice(1));
    }
  }
  return out;
}

function flagTerm(option: Option): string {
  return option.short ? option.flags : `    ${option.flags}`;
}

/** A flag's description with its choices and default, written as a person would (no JSON quotes). */
export function flagDescription(option: Option): string {
  const extra: string[] = [];
  if (option.argChoices) extra.push(`one of: ${option.argChoices.join(', ')}`);
  if (option.defaultValue !== undefined && (option.required || option.optional)) {
    extra.push(`default ${option.defaultValueDescription ?? String(option.defaultValue)}`);
  }
  if (option.envVar) extra.push(`env ${option.envVar}`);
  return [option.description, extra.length > 0 ? `(${extra.join('; ')})` : ''].filter((s) => s !== '').join(' ');
}

function argumentDescription(argument: Argument): string {
  const extra = argument.argChoices ? ` (one of: ${argument.argChoices.join(', ')})` : '';
  return `${argument.description}${extra}`;
}

function root(cmd: Command): Command {
  let top = cmd;
  while (top.parent) top = top.parent;
  return top;
}

/** Every page of facectl's help. */
export function formatHelp(cmd: Command, helper: Help): string {
  const width = helper.helpWidth ?? 80;
  const path = fullPath(cmd);
  const sections: string[][] = [];
  const section = (title: string, lines: string[]) => {
    if (lines.length > 0) sections.push([title, ...lines]);
  };

  if (cmd.description()) sections.push(reflow(cmd.description(), width));

  const isGroup = cmd.commands.length > 0;
  const usage = !cmd.parent
    ? `${path} <command> <subcommand> [flags]`
    : isGroup
      ? `${path} <command> [flags]`
      : `${path} ${ownUsage(cmd)}`;
  section('USAGE', [`  ${usage}`]);

  if (isGroup) {
    const commands = cmd.commands.filter((sub) => !(sub as { _hidden?: boolean })._hidden);
    const items: [string, string][] = commands.map((sub) => [`${sub.name()}:`, summaryOf(sub)]);
    if (!cmd.parent) items.push(['help:', 'Show help for a command (`facectl help <command> [<subcommand>]`)']);
    section(cmd.parent ? 'AVAILABLE COMMANDS' : 'COMMANDS', itemList(items, width));
  }

  const args = helper.visibleArguments(cmd);
  section(
    'ARGUMENTS',
    itemList(
      args.map((a) => [a.name(), argumentDescription(a)]),
      width,
    ),
  );

  const own = helper.visibleOptions(cmd).filter((o) => !(cmd.parent && o.long === '--help'));
  const help = helper.visibleOptions(cmd).find((o) => o.long === '--help');
  section(
    'FLAGS',
    itemList(
      own.map((o) => [flagTerm(o), o.long === '--help' ? 'Show help for command' : flagDescription(o)]),
      width,
    ),
  );
  if (cmd.parent) {
    const inherited = root(cmd).options.filter((o) => o.long !== '--version');
    const rows: [string, string][] = inherited.map((o) => [flagTerm(o), flagDescription(o)]);
    if (help) rows.push([flagTerm(help), 'Show help for command']);
    section('INHERITED FLAGS', itemList(rows, width));
  }

  section(
    'EXAMPLES',
    examplesOf(cmd).map((example) => `  $ ${example}`),
  );

  const learn = isGroup
    ? `Use \`${path} <command> --help\` for more information about a command.`
    : `Use \`facectl help\` for the list of commands.`;
  section('LEARN MORE', wrap(learn, width, '  '));

  return `${sections.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}

/** `[flags] <id> [input]`: commander's usage with "options" called flags, as gh does. */
function ownUsage(cmd: Command): string {
  return cmd.usage().replace('[options]', '[flags]');
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/program.js';
import { createTestContext } from '../helpers/test-context.js';
import { ROOT } from '../helpers/run-cli.js';

/**
 * README's command table is what a user reads first: every command the CLI has is in it, and every
 * command and flag it names exists. A new verb or a renamed flag fails here until README says so.
 */

interface Row {
  path: string;
  flags: string[];
}

/**
 * The commands (and the flags) of the first column of README's "## Commands" table. `a b|c` is the
 * commands `a b` and `a c` when `a` has subcommands (`config get|set`), else `a` with an argument.
 */
function readmeRows(groups: Set<string>): Row[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Commands'), readme.indexOf('\n## Exit codes'));
  const rows: Row[] = [];
  for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const cell = line.slice(1, line.indexOf(' | '));
    for (const [, usage = ''] of cell.matchAll(/`([^`]+)`/g)) {
      const text = usage.replaceAll('\\|', '|');
      const words = text.split(' ');
      const first = words.findIndex((w) => /^[[<(-]/.test(w));
      const path = (first < 0 ? words : words.slice(0, first)).join(' ');
      const flags = [...text.matchAll(/(?<![\w-])(--[a-z][a-z-]*|-[A-Za-z])\b/g)].map(([flag]) => flag);
      const [group = '', verbs] = path.split(' ');
      if (verbs?.includes('|') && groups.has(group)) {
        for (const verb of verbs.split('|')) rows.push({ path: `${group} ${verb}`, flags });
      } else
        rows.push({
          path: path
            .split(' ')
            .filter((w) => !w.includes('|'))
            .join(' '),
          flags,
        });
    }
  }
  return rows;
}

/** Each command that runs (not a group, not help), by its path. */
function leaves(command: Command, prefix: string[] = []): Map<string, Command> {
  const found = new Map<string, Command>();
  for (const sub of command.commands) {
    const path = [...prefix, sub.name()];
    if (sub.name() === 'help') continue;
    if (sub.commands.length === 0) found.set(path.join(' '), sub);
    for (const [p, c] of leaves(sub, path)) found.set(p, c);
  }
  return found;
}

describe("README's command table", () => {
  it('names every command the CLI has, and only those, with flags each command has', async () => {
    const program = await buildProgram(createTestContext().ctx);
    const commands = leaves(program);
    const rows = readmeRows(new Set(program.commands.filter((c) => c.commands.length > 0).map((c) => c.name())));
    expect(rows.length).toBeGreaterThan(10);
    expect([...commands.keys()].filter((path) => !rows.some((row) => row.path === path))).toEqual([]);
    const globals = new Set(program.options.flatMap((o) => [o.long, o.short]));
    for (const row of rows) {
      const command = commands.get(row.path);
      expect(command, `README names \`${row.path}\`, which the CLI does not have`).toBeDefined();
      const own = new Set(command?.options.flatMap((o) => [o.long, o.short]));
      const unknown = row.flags.filter((flag) => !own.has(flag) && !globals.has(flag));
      expect({ command: row.path, unknown }).toEqual({ command: row.path, unknown: [] });
    }
  });
});

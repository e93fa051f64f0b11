import { describe, expect, it } from 'vitest';
import { commandPaths } from '../../src/help-pages.js';
import { run } from '../../src/main.js';
import { buildProgram, TOP_LEVEL_NAMES } from '../../src/program.js';
import { createTestContext } from '../helpers/test-context.js';

/**
 * run(argv) declares only the top-level command the line starts with (an API command need not build
 * the other ~40). These tests check that this never changes what a user sees.
 */

const topLevel = async (argv?: string[]) =>
  (await buildProgram(createTestContext().ctx, argv)).commands.map((command) => command.name());

describe('the command tree for a command line', () => {
  it('each entry of the table declares exactly its own command, with all its subcommands', async () => {
    const whole = await buildProgram(createTestContext().ctx);
    expect(whole.commands.map((command) => command.name())).toEqual(TOP_LEVEL_NAMES);
    for (const name of TOP_LEVEL_NAMES.filter((n) => n !== 'completion' && n !== 'help')) {
      const only = await buildProgram(createTestContext().ctx, [name]);
      expect(only.commands.map((command) => command.name())).toEqual([name]);
      const sub = (paths: string[]) => paths.filter((p) => p === name || p.startsWith(`${name} `));
      expect(commandPaths(only).slice(1)).toEqual(sub(commandPaths(whole)));
    }
  });

  it('builds everything when the line does not start with one command', async () => {
    for (const argv of [
      [],
      ['--help'],
      ['-h'],
      ['--version'],
      ['--json', 'faces', 'get', 'x'],
      ['help', 'faces'],
      ['fces', 'get'],
      ['login'],
      ['--bogus', 'faces', 'get'],
      ['completion', 'bash'],
    ]) {
      expect({ argv, names: await topLevel(argv) }).toEqual({ argv, names: TOP_LEVEL_NAMES });
    }
    expect(await topLevel(['faces', 'get', 'x'])).toEqual(['faces']);
  });

  it('answers as before: a typo in a group, a group without its verb, a typo at the top', async () => {
    const typo = createTestContext();
    expect(await run(['faces', 'gte', 'ada'], typo.ctx)).toBe(2);
    expect(typo.stderr()).toContain("error: unknown command 'gte'");
    expect(typo.stderr()).toContain('(Did you mean get?)');
    expect(typo.stderr()).toContain('usage: facectl faces [flags] [command]');

    // A group without its verb: its help on stdout, exit 0 (as gh).
    const group = createTestContext();
    expect(await run(['faces'], group.ctx)).toBe(0);
    expect(group.stdout()).toContain('Usage: facectl faces [flags] [command]');
    expect(group.stdout()).toMatch(/\n {2}create +Create a face\n/);
    expect(group.stderr()).toBe('');

    const top = createTestContext();
    expect(await run(['fcaes', 'get'], top.ctx)).toBe(2);
    expect(top.stderr()).toContain("error: unknown command 'fcaes'");
    expect(top.stderr()).toContain('(Did you mean faces?)');

    const missing = createTestContext({ globals: { json: true } });
    expect(await run(['--profile', 'work', 'faces', 'get', '--json'], missing.ctx)).toBe(2);
    expect(JSON.parse(missing.stderr()).error.message).toBe("missing required argument 'face_id'");
  });

  it('a verb typed without its group is suggested with it: `facectl login` is `facectl auth login`', async () => {
    const tc = createTestContext();
    expect(await run(['login'], tc.ctx)).toBe(2);
    expect(tc.stdout()).toBe('');
    expect(tc.stderr()).toBe(
      "error: unknown command 'login'\n(Did you mean auth login?)\nusage: facectl [flags] [command]\nrun `facectl --help` for details\n",
    );
  });

  it('completion still sees the whole tree', async () => {
    const tc = createTestContext();
    expect(await run(['completion', 'bash'], tc.ctx)).toBe(0);
    for (const name of TOP_LEVEL_NAMES) expect(tc.stdout()).toContain(name);
  });
});

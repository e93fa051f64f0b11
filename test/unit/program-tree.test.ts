import { describe, expect, it } from 'vitest';
import { splitGlobalFlags } from '../../src/global-flags.js';
import { commandPaths } from '../../src/help-pages.js';
import { run } from '../../src/main.js';
import { buildProgram, namedCommand, TOP_LEVEL_NAMES } from '../../src/program.js';
import { createTestContext } from '../helpers/test-context.js';

/**
 * run(argv) declares only the top-level command the line names (an API command need not build the
 * other ~40). These tests check that this never changes what a user sees.
 */

const topLevel = (argv?: string[]) =>
  buildProgram(createTestContext().ctx, argv).commands.map((command) => command.name());

describe('the command tree for a command line', () => {
  it('each entry of the table declares exactly its own command, with all its subcommands', () => {
    const whole = buildProgram(createTestContext().ctx);
    expect(whole.commands.map((command) => command.name())).toEqual(TOP_LEVEL_NAMES);
    for (const name of TOP_LEVEL_NAMES.filter((n) => n !== 'completion')) {
      const only = buildProgram(createTestContext().ctx, [name]);
      expect(only.commands.map((command) => command.name())).toEqual([name]);
      const sub = (paths: string[]) => paths.filter((p) => p === name || p.startsWith(`${name} `));
      expect(commandPaths(only).slice(1)).toEqual(sub(commandPaths(whole)));
    }
  });

  it('finds the command once the global flags and their values are off the line', () => {
    const named = (argv: string[]) => namedCommand(splitGlobalFlags(argv).words);
    expect(named(['faces', 'get', 'ada'])).toBe('faces');
    expect(named(['--json', '--no-input', 'docs', 'submit'])).toBe('docs');
    expect(named(['--profile', 'faces', 'keys', 'create'])).toBe('keys');
    expect(named(['--base-url', 'http://x', '--debug', 'api', 'GET', '/v1/x'])).toBe('api');
    expect(named(['--profile=work', '--base-url=http://x', 'threads'])).toBe('threads');
    expect(named(['--insecure-http', '--api-key-stdin', 'auth', 'status'])).toBe('auth');
  });

  it('builds everything when the line does not plainly name one command', () => {
    for (const argv of [
      [],
      ['--help'],
      ['-h'],
      ['--version'],
      ['help', 'faces'],
      ['fces', 'get'],
      ['--bogus', 'faces', 'get'],
      ['--profile'],
      ['--', 'faces'],
      ['completion', 'bash'],
    ]) {
      expect({ argv, named: namedCommand(argv) }).toEqual({ argv, named: undefined });
      expect(topLevel(argv)).toEqual(TOP_LEVEL_NAMES);
    }
    expect(topLevel(['faces', 'get', 'x'])).toEqual(['faces']);
  });

  it('answers as before: a typo in a group, a group without its verb, a typo at the top', async () => {
    const typo = createTestContext();
    expect(await run(['faces', 'gte', 'ada'], typo.ctx)).toBe(2);
    expect(typo.stderr()).toContain("error: unknown command 'gte'");
    expect(typo.stderr()).toContain('(Did you mean get?)');
    expect(typo.stderr()).toContain('usage: facectl faces [options] [command]');

    // A group without its verb: its help on stdout, exit 0 (as gh).
    const group = createTestContext();
    expect(await run(['faces'], group.ctx)).toBe(0);
    expect(group.stdout()).toContain('USAGE\n  facectl faces <command> [flags]');
    expect(group.stdout()).toContain('  create:');
    expect(group.stderr()).toBe('');

    const top = createTestContext();
    expect(await run(['fcaes', 'get'], top.ctx)).toBe(2);
    expect(top.stderr()).toContain("error: unknown command 'fcaes'");
    expect(top.stderr()).toContain('(Did you mean faces?)');

    const missing = createTestContext({ globals: { json: true } });
    expect(await run(['--profile', 'work', 'faces', 'get', '--json'], missing.ctx)).toBe(2);
    expect(JSON.parse(missing.stderr()).error.message).toBe("missing required argument 'face_id'");
  });

  it('completion still sees the whole tree', async () => {
    const tc = createTestContext();
    expect(await run(['completion', 'bash'], tc.ctx)).toBe(0);
    for (const name of TOP_LEVEL_NAMES) expect(tc.stdout()).toContain(name);
  });
});

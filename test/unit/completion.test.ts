import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/main.js';
import { ROOT } from '../helpers/run-cli.js';
import { createTestContext } from '../helpers/test-context.js';

const FILES = {
  bash: 'completions/facectl.bash',
  zsh: 'completions/_facectl',
  fish: 'completions/facectl.fish',
} as const;

async function generate(shell: string): Promise<string> {
  const tc = createTestContext();
  expect(await run(['completion', shell], tc.ctx)).toBe(0);
  return tc.stdout();
}

/** What bash offers for the last of `words` (COMP_WORDS as bash sets them) with the generated script loaded. */
function bashComplete(script: string, words: string[]): string {
  const setup = `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}`;
  return execFileSync('bash', ['-c', `${script}\n${setup}; _facectl; echo "\${COMPREPLY[*]}"`], {
    encoding: 'utf8',
  }).trim();
}

describe('completion scripts', () => {
  it.each(Object.entries(FILES))(
    'the committed %s script matches the command tree (run `npm run completions`)',
    async (shell, file) => {
      expect(await generate(shell)).toBe(readFileSync(join(ROOT, file), 'utf8'));
    },
  );

  it('bash completes commands, subcommands, flags and choices', async () => {
    const script = await generate('bash');
    const complete = (words: string[]) => bashComplete(script, words);
    expect(complete(['facectl', 'au'])).toBe('auth');
    expect(complete(['facectl', 'auth', ''])).toBe('login logout status token switch');
    expect(complete(['facectl', '--profile', 'work', 'config', 's'])).toBe('set');
    expect(complete(['facectl', 'completion', ''])).toBe('bash zsh fish');
    expect(complete(['facectl', 'auth', 'login', '--'])).toContain('--api-key-stdin');
    expect(complete(['facectl', 'api', 'GET', '/v1/x', '--in'])).toBe('--input --include --insecure-http');
  });

  it('bash completes the values of every enumerated flag and the config keys (issue 12 item 11)', async () => {
    const script = await generate('bash');
    const complete = (words: string[]) => bashComplete(script, words);
    expect(complete(['facectl', 'docs', 'submit', '--format', ''])).toBe('text json ndjson');
    expect(complete(['facectl', 'docs', 'submit', '--perspective', 'f'])).toBe('first-person');
    expect(complete(['facectl', 'import', 'ada', 'https://x/', '--type', ''])).toBe('document transcript');
    expect(complete(['facectl', 'import', 'ada', 'https://x/', '--perspective', ''])).toBe('first-person third-person');
    expect(complete(['facectl', 'threads', 'create', '--interviewer-billing-source', ''])).toBe(
      'oauth compile credits',
    );
    expect(complete(['facectl', 'keys', 'create', '--scopes', 'faces'])).toBe('faces:read faces:write');
    const { SETTINGS } = await import('../../src/config/settings.js');
    const all = Object.keys(SETTINGS);
    const settable = Object.values(SETTINGS)
      .filter((s) => !s.refuseSet)
      .map((s) => s.name);
    expect(all).toEqual(expect.arrayContaining(['base_url', 'api_key', 'default_profile']));
    expect(complete(['facectl', 'config', 'get', ''])).toBe(all.join(' '));
    expect(complete(['facectl', 'config', 'set', ''])).toBe(settable.join(' '));
    expect(complete(['facectl', 'config', 'unset', 'd'])).toBe('default_profile');
  });

  it('zsh and fish scripts carry the same values', async () => {
    const zsh = await generate('zsh');
    const fish = await generate('fish');
    expect(zsh).toContain("'docs submit|--format') items=('text' 'json' 'ndjson') ;;");
    expect(zsh).toContain("'threads create|--interviewer-billing-source') items=('oauth' 'compile' 'credits') ;;");
    expect(zsh).toMatch(/'config set'\) items=\('base_url'[^)]*'default_profile'\) ;;/);
    expect(fish).toMatch(/-l format -r -a 'text json ndjson'/);
    expect(fish).toMatch(/-l type -r -a 'document transcript'/);
    expect(fish).toContain(
      "complete -c facectl -n '__fish_seen_subcommand_from config; and __fish_seen_subcommand_from get' -a 'base_url api_key",
    );
  });

  it('every flag whose help lists its values ("a, b or c") has them in FLAG_VALUES', async () => {
    const { buildProgram } = await import('../../src/program.js');
    const { FLAG_VALUES } = await import('../../src/commands/completion.js');
    const walk = (c: Command): Command[] => [c, ...c.commands.flatMap(walk)];
    for (const command of walk(buildProgram(createTestContext().ctx))) {
      for (const option of command.options) {
        if (!(option.required || option.optional) || option.argChoices) continue;
        const listed = /^([a-z-]+, )*[a-z-]+ or [a-z-]+\b/.exec(option.description)?.[0];
        if (!listed) continue;
        const values = listed.split(/, | or /);
        expect({ flag: option.long, values: FLAG_VALUES[option.long as string] }).toEqual({
          flag: option.long,
          values,
        });
      }
    }
  });

  it('zsh and fish scripts declare every command group', async () => {
    const zsh = await generate('zsh');
    const fish = await generate('fish');
    expect(zsh.startsWith('#compdef facectl\n')).toBe(true);
    for (const group of ['auth', 'config', 'api', 'completion', 'serve']) {
      expect(zsh).toContain(`'${group}:`);
      expect(fish).toContain(`-a ${group} `);
    }
    expect(fish).toContain(
      "complete -c facectl -n '__fish_seen_subcommand_from auth; and not __fish_seen_subcommand_from login logout status token switch' -a login",
    );
  });
});

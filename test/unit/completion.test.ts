import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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

describe('completion scripts', () => {
  it.each(Object.entries(FILES))(
    'the committed %s script matches the command tree (run `npm run completions`)',
    async (shell, file) => {
      expect(await generate(shell)).toBe(readFileSync(join(ROOT, file), 'utf8'));
    },
  );

  it('bash completes commands, subcommands, flags and choices', async () => {
    const script = await generate('bash');
    const complete = (words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _facectl; echo "\${COMPREPLY[*]}"`,
        ],
        { encoding: 'utf8' },
      ).trim();
    expect(complete(['facectl', 'au'])).toBe('auth');
    expect(complete(['facectl', 'auth', ''])).toBe('login logout status token switch');
    expect(complete(['facectl', '--profile', 'work', 'config', 's'])).toBe('set');
    expect(complete(['facectl', 'completion', ''])).toBe('bash zsh fish');
    expect(complete(['facectl', 'auth', 'login', '--'])).toContain('--api-key-stdin');
    expect(complete(['facectl', 'api', 'GET', '/v1/x', '--in'])).toBe('--input --include --insecure-http');
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

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/main.js';
import { SEED_SCOPE_PATTERN } from '../../src/contract/values.js';
import { BIN, ROOT } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp.js';
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
function bashComplete(script: string, words: string[], env: NodeJS.ProcessEnv = process.env): string {
  const setup = `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}`;
  return execFileSync('bash', ['-c', `${script}\n${setup}; _facectl; echo "\${COMPREPLY[*]}"`], {
    encoding: 'utf8',
    env,
  }).trim();
}

/**
 * A `facectl` first on PATH that answers as `config list --json --jq '.profiles | keys[]'` would for a
 * file holding the profiles default, laptop and work, and logs each command line it got (with
 * FACECTL_PROFILE as it saw it) to the file `calls`.
 */
function fakeFacectl(): { env: NodeJS.ProcessEnv; calls: () => string[] } {
  const dir = makeTempDir('facectl-completion-');
  const log = join(dir, 'calls');
  writeFileSync(
    join(dir, 'facectl'),
    `#!/bin/sh\necho "FACECTL_PROFILE=\${FACECTL_PROFILE-unset} $*" >> '${log}'\nprintf 'default\\nlaptop\\nwork\\n'\n`,
    { mode: 0o755 },
  );
  return {
    env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}`, FACECTL_PROFILE: 'nosuch' },
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trimEnd().split('\n') : []),
  };
}

/** The --jq filter the scripts list profiles with. */
const ONLY_PROFILE_NAMES = '.profiles | keys[] | select(test("^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"))';

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
    expect(complete(['facectl', 'import', '--perspective', '=', 'f'])).toBe('first-person');
  });

  it('bash completes a scope typed with its colons, which bash cuts the word at, and offers only valid scopes', async () => {
    const script = await generate('bash');
    // As bash hands them over: the words cut at each colon, the line whole.
    const typed = (line: string, words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; COMP_LINE='${line}'; COMP_POINT=${line.length}; _facectl; echo "\${COMPREPLY[*]}"`,
        ],
        { encoding: 'utf8' },
      ).trim();
    const head = ['facectl', 'keys', 'create', '--scopes'];
    // bash puts each of these in the place of the part after the last colon.
    expect(typed('facectl keys create --scopes v1:comp', [...head, 'v1', ':', 'comp'])).toBe(
      'compile compile:read compile:write',
    );
    expect(typed('facectl keys create --scopes v1:faces:', [...head, 'v1', ':', 'faces', ':', ''])).toBe('read write');
    // A list: the scopes before the last comma stay.
    expect(
      typed('facectl keys create --scopes v1:faces:read,v1:comp', [
        ...head,
        'v1',
        ':',
        'faces',
        ':',
        'read,v1',
        ':',
        'comp',
      ]),
    ).toBe('compile compile:read compile:write');
    // Written `--scopes=` (a ring's find: bash offered the directory's files).
    const eq = ['facectl', 'keys', 'create', '--scopes', '='];
    expect(typed('facectl keys create --scopes=v1:comp', [...eq, 'v1', ':', 'comp'])).toBe(
      'compile compile:read compile:write',
    );
    expect(typed('facectl keys create --scopes=v1:faces,v1:k', [...eq, 'v1', ':', 'faces,v1', ':', 'k'])).toBe(
      'keys keys:read keys:write',
    );
    const offered = typed('facectl keys create --scopes ', [...head, '']).split(' ');
    expect(offered).toHaveLength(12);
    for (const scope of offered) expect(scope).toMatch(SEED_SCOPE_PATTERN);
  });

  it('bash completes `help` among the commands, and the commands after it', async () => {
    const script = await generate('bash');
    expect(bashComplete(script, ['facectl', 'he'])).toBe('help');
    expect(bashComplete(script, ['facectl', ''])).toMatch(/ completion help$/);
    expect(bashComplete(script, ['facectl', 'help', 'd'])).toBe('docs doctor');
  });

  it('bash completes profile names from `facectl config list` after `auth switch` and --profile, never file names', async () => {
    const script = await generate('bash');
    const { env, calls } = fakeFacectl();
    const complete = (words: string[]) => bashComplete(script, words, env);
    expect(complete(['facectl', 'auth', 'switch', ''])).toBe('default laptop work');
    expect(complete(['facectl', 'auth', 'switch', 'w'])).toBe('work');
    expect(complete(['facectl', '--profile', 'l'])).toBe('laptop');
    expect(complete(['facectl', 'faces', 'get', '--profile', ''])).toBe('default laptop work');
    // `--profile=` (a ring's find: nothing was offered): bash makes the `=` a word of its own.
    expect(complete(['facectl', '--profile', '='])).toBe('default laptop work');
    expect(complete(['facectl', '--profile', '=', 'l'])).toBe('laptop');
    expect(complete(['facectl', '--profile', '=', 'work', 'faces', 'g'])).toBe('get');
    expect(complete(['facectl', 'auth', 'switch', '--'])).toContain('--help');
    expect(complete(['facectl', 'auth', 's'])).toBe('status switch');
    // Asked once per profile completion, with FACECTL_PROFILE blanked (one naming a missing profile fails).
    expect(calls()).toEqual(Array(6).fill(`FACECTL_PROFILE= config list --json --jq ${ONLY_PROFILE_NAMES}`));
    // The script is installed with `complete -o default` (file names when nothing matches): not here.
    expect(script).toMatch(
      /auth switch.*\n.*\n\s+compopt \+o default 2>\/dev\/null\n\s+COMPREPLY=\(\$\(compgen -W "\$\(_facectl_profiles\)"/,
    );
  });

  it('bash offers only names a profile may have: a config file naming one `$(cmd)` runs nothing at a TAB (found by a breaker)', async () => {
    const script = await generate('bash');
    const dir = makeTempDir('facectl-completion-');
    const ran = join(dir, 'PWNED');
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'facectl'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`, { mode: 0o755 });
    const config = join(dir, 'config');
    mkdirSync(config, { mode: 0o700 });
    const names = ['default', `$(touch\${IFS}${ran})`, `\`touch ${ran}\``, 'bad name', '__proto__', 'ok-2'];
    writeFileSync(
      join(config, 'config.json'),
      JSON.stringify({ profiles: Object.fromEntries(names.map((n) => [n, {}])) }),
      {
        mode: 0o600,
      },
    );
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, FACECTL_CONFIG_DIR: config };
    expect(bashComplete(script, ['facectl', 'auth', 'switch', ''], env)).toBe('default ok-2');
    expect(existsSync(ran)).toBe(false);
  });

  it('zsh and fish complete profile names after `auth switch` and --profile, and `help`', async () => {
    const list = `env FACECTL_PROFILE= facectl config list --json --jq '${ONLY_PROFILE_NAMES}' 2>/dev/null`;
    const zsh = await generate('zsh');
    const fish = await generate('fish');
    expect(zsh).toContain(
      `  if [[ "$prev" == --profile || ("$path_" == 'auth switch' && "\${words[CURRENT]}" != -*) ]]; then\n` +
        `    items=(\${(f)"$(${list})"})\n` +
        "    _describe -t profiles 'profile' items\n",
    );
    expect(zsh).toContain("'help:Show help for a command'");
    const fishList = list.replaceAll("'", "\\'");
    expect(fish).toContain(
      `complete -c facectl -n '__fish_seen_subcommand_from auth; and __fish_seen_subcommand_from switch' -a '(${fishList})'\n`,
    );
    // -x, not -r: its values only (with -r fish offers the directory's files beside them, a ring's find).
    expect(fish).toContain(`complete -c facectl -l profile -x -a '(${fishList})' -d `);
    expect(fish).toContain("complete -c facectl -n '__fish_use_subcommand' -a help -d 'Show help for a command'\n");
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
    expect(complete(['facectl', 'keys', 'create', '--scopes', 'v1'])).toMatch(
      /^v1:keys v1:keys:read v1:keys:write v1:faces /,
    );
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
    // A ring's finds, checked in zsh by hand: `--profile=la`, `--scopes a,b` and the first TAB of a shell completed
    // nothing (the file, autoloaded, is run as _facectl itself: funcstack names it, zsh_eval_context did not).
    expect(zsh).toContain(`prev="\${words[CURRENT]%%=*}"\n    compset -P '*='`);
    expect(zsh).toContain("compset -P '*,'\n    _describe -t values 'value' items");
    expect(zsh).toMatch(
      /\nif \[\[ "\$\{funcstack\[1\]\}" == _facectl \]\]; then\n {2}_facectl "\$@"\nelse\n {2}compdef _facectl facectl\nfi\n$/,
    );
    expect(fish).toMatch(/-l format -x -a 'text json ndjson'/);
    expect(fish).toMatch(/-l type -x -a 'document transcript'/);
    expect(fish).toMatch(/-l file -r -d /);
    expect(fish).toContain(
      "complete -c facectl -n '__fish_seen_subcommand_from config; and __fish_seen_subcommand_from get' -a 'base_url api_key",
    );
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

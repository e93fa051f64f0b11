import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, makeConfigDir, ROOT, runCli } from '../helpers/run-cli.js';
import { useServe } from '../helpers/hooks.js';
import { tracing, traced } from '../helpers/module-trace.js';
import { watchChild } from '../helpers/watch-child.js';

/**
 * The built bin against `facectl serve` on port 0: auth, config, api and completion in their script
 * forms (flags, env, --json, pipes), one terminal form through a pseudo-terminal (util-linux `script`),
 * and the process-level behaviours (exit codes, EPIPE, startup without heavy modules).
 */

const serve = useServe();

const mode = (path: string) => statSync(path).mode & 0o777;

describe('auth and config, as a script would use them', () => {
  it('logs in from stdin, stores the key 0600, and later commands use it', async () => {
    const key = serve.key('pro');
    const configDir = join(makeConfigDir(), 'nested');
    const env = { FACECTL_CONFIG_DIR: configDir };
    const login = await runCli(['auth', 'login', '--api-key-stdin', '--base-url', serve.baseUrl, '--json'], {
      env,
      stdin: `${key}\n`,
    });
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(JSON.parse(login.stdout)).toMatchObject({ profile: 'default', plan: 'pro', key_prefix: key.slice(0, 12) });
    expect(login.stdout).not.toContain(key);

    const file = join(configDir, 'config.json');
    expect(mode(configDir)).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      profiles: { default: { api_key: key, api_key_base_url: serve.baseUrl, base_url: serve.baseUrl } },
    });

    const status = await runCli(['auth', 'status', '--json'], { env });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ key_source: 'profile', base_url_source: 'profile', plan: 'pro' });

    // A key from the environment overrides the stored one, and status says so.
    const override = await runCli(['auth', 'status'], { env: { ...env, FACECTL_API_KEY: serve.key('free') } });
    expect(override.stdout).toContain(`key\t${serve.key('free').slice(0, 12)}… (from FACECTL_API_KEY)`);
    expect(override.stdout).toContain('plan\tfree');

    const logout = await runCli(['auth', 'logout'], { env });
    expect(logout.code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ profiles: { default: { base_url: serve.baseUrl } } });
    expect(mode(file)).toBe(0o600);

    const after = await runCli(['api', 'GET', '/v1/auth/api-keys/current'], { env });
    expect(after.code).toBe(3);
    expect(after.stderr.trimEnd().split('\n').at(-1)).toBe('run `facectl auth login`, or set FACECTL_API_KEY');
  });

  it('a first login whose key the service refuses leaves no config file; the next, accepted, writes it', async () => {
    const configDir = join(makeConfigDir(), 'first');
    const env = { FACECTL_CONFIG_DIR: configDir };
    const file = join(configDir, 'config.json');
    const args = ['auth', 'login', '--api-key-stdin', '--base-url', serve.baseUrl];
    const wrong = `${serve.key('pro').slice(0, 13)}${'x'.repeat(32)}`;
    const refused = await runCli(args, { env, stdin: `${wrong}\n` });
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain(`error: ${serve.baseUrl} refused this API key; nothing was stored`);
    expect(existsSync(file)).toBe(false);
    const key = serve.key('pro');
    const login = await runCli(args, { env, stdin: `${key}\n` });
    expect(login.code, login.stderr).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      profiles: { default: { api_key: key, api_key_base_url: serve.baseUrl, base_url: serve.baseUrl } },
    });
  });

  it('config set/get/list through the file', async () => {
    const configDir = makeConfigDir();
    const env = { FACECTL_CONFIG_DIR: configDir };
    expect((await runCli(['config', 'set', 'base_url', serve.baseUrl, '--profile', 'local'], { env })).code).toBe(0);
    expect((await runCli(['config', 'set', 'default_profile', 'local'], { env })).code).toBe(0);
    const get = await runCli(['config', 'get', 'base_url'], { env });
    expect(get.stdout).toBe(`${serve.baseUrl}\n`);
    const list = await runCli(['config', 'list', '--json'], { env });
    expect(JSON.parse(list.stdout)).toMatchObject({
      config_file: join(configDir, 'config.json'),
      default_profile: 'local',
      active_profile: 'local',
      profiles: { local: { base_url: serve.baseUrl } },
    });
  });

  it('a corrupt config file: exit 2 naming it, left as it was', async () => {
    const configDir = makeConfigDir();
    const file = join(configDir, 'config.json');
    writeFileSync(file, '{"profiles": {', { mode: 0o600 });
    const result = await runCli(['auth', 'status'], { env: { FACECTL_CONFIG_DIR: configDir } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: configuration file ${file} is not valid JSON`);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(file, 'utf8')).toBe('{"profiles": {');
  });

  it('a config file left 0644 is warned about and made 0600', async () => {
    const configDir = makeConfigDir();
    const file = join(configDir, 'config.json');
    writeFileSync(file, JSON.stringify({ profiles: { default: { base_url: serve.baseUrl } } }), { mode: 0o644 });
    const result = await runCli(['config', 'get', 'base_url'], { env: { FACECTL_CONFIG_DIR: configDir } });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`warning: configuration file ${file} had mode 0644; changed it to 0600`);
    expect(mode(file)).toBe(0o600);
  });

  it('doctor on a config file left 0644 makes it 0600 and says so once, in its checks', async () => {
    const configDir = makeConfigDir();
    const file = join(configDir, 'config.json');
    writeFileSync(file, JSON.stringify({ profiles: { default: { base_url: serve.baseUrl } } }), { mode: 0o644 });
    // No key: doctor reads the stored profile too, which would fix (and warn about) the mode again.
    const result = await runCli(['doctor', '--json'], { env: { FACECTL_CONFIG_DIR: configDir } });
    const checks = JSON.parse(result.stdout).checks as { name: string; status: string; detail: string }[];
    expect(checks.find((c) => c.name === 'config file mode')).toMatchObject({
      status: 'warn',
      detail: `${file} had mode 0644 (others could read it); changed it to 0600`,
    });
    expect(result.stderr).not.toContain('had mode');
    expect(mode(file)).toBe(0o600);
  });
});

describe('api', () => {
  const env = () => ({ FACECTL_API_KEY: serve.key('pro'), FACECTL_BASE_URL: serve.baseUrl });

  it('POSTs a body from a pipe and GETs it back', async () => {
    const created = await runCli(['api', 'POST', '/v1/faces', '--input', '-'], {
      env: env(),
      stdin: JSON.stringify({ name: 'Grace Hopper', alias: 'e2e-grace' }),
    });
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ alias: 'e2e-grace' });
    const read = await runCli(['api', 'GET', '/v1/faces/e2e-grace'], { env: env() });
    expect(JSON.parse(read.stdout)).toMatchObject({ alias: 'e2e-grace', name: 'Grace Hopper' });
  });

  it('refuses bad input before sending: exit 2, the service saw nothing', async () => {
    const before = serve.requests();
    const bad = await runCli(['api', 'POST', '/v1/faces', '--input', '-'], {
      env: env(),
      stdin: '{"name": 7, "alias": "ada"}', // a name that is not a string: the seed's own rule
    });
    expect(bad.code).toBe(2);
    const unknownFlag = await runCli(['api', 'GET', '/v1/faces/x', '--bogus'], { env: env() });
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toContain('usage: facectl api [flags] <method-or-path> [path]');
    expect(serve.requests()).toBe(before);
  });

  it('--debug traces the exchange with the key redacted', async () => {
    const result = await runCli(['api', 'GET', '/v1/auth/api-keys/current', '--debug'], { env: env() });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('debug: > authorization: Bearer [redacted]');
    expect(result.stderr).toMatch(/debug: < 200 \(\d+ ms\)/);
    expect(result.stderr).not.toContain(serve.key('pro'));
    expect(result.stderr).not.toContain(serve.key('pro').slice(13));
  });

  it('connection refused: exit 8 with the fix', async () => {
    const result = await runCli(['api', 'GET', '/v1/auth/api-keys/current'], {
      env: { FACECTL_API_KEY: serve.key('pro'), FACECTL_BASE_URL: 'http://127.0.0.1:9' },
    });
    expect(result.code).toBe(8);
    expect(result.stderr).toContain('error: cannot reach http://127.0.0.1:9: connection refused');
    expect(result.stderr.trimEnd().split('\n').at(-1)).toContain('is `facectl serve` running?');
  });

  it('a key with a control character in FACECTL_API_KEY is refused locally', async () => {
    const before = serve.requests();
    const result = await runCli(['api', 'GET', '/v1/auth/api-keys/current'], {
      env: { FACECTL_API_KEY: 'fcs_abc\u0007def', FACECTL_BASE_URL: serve.baseUrl },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('FACECTL_API_KEY contains whitespace, control or non-ASCII characters');
    expect(serve.requests()).toBe(before);
  });
});

describe('process behaviour', () => {
  it('completion prints the committed scripts', async () => {
    for (const [shell, file] of [
      ['bash', 'completions/facectl.bash'],
      ['zsh', 'completions/_facectl'],
      ['fish', 'completions/facectl.fish'],
    ] as const) {
      const result = await runCli(['completion', shell]);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(readFileSync(join(ROOT, file), 'utf8'));
    }
  });

  it('bash completion of `auth switch` and --profile lists the profiles of the config file (the built bin on PATH)', async () => {
    const dir = makeConfigDir();
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ default_profile: 'work', profiles: { work: { base_url: serve.baseUrl }, laptop: {} } }),
      { mode: 0o600 },
    );
    const bin = makeConfigDir();
    writeFileSync(join(bin, 'facectl'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`, { mode: 0o755 });
    const script = readFileSync(join(ROOT, 'completions/facectl.bash'), 'utf8');
    const complete = (words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `${script}\nCOMP_WORDS=(${words.join(' ')} ''); COMP_CWORD=${words.length}; _facectl; echo "\${COMPREPLY[*]}"`,
        ],
        {
          encoding: 'utf8',
          env: {
            HOME: process.env.HOME ?? dir,
            PATH: `${bin}:${process.env.PATH ?? ''}`,
            FACECTL_CONFIG_DIR: dir,
            FACECTL_PROFILE: 'gone',
          },
        },
      ).trim();
    expect(complete(['facectl', 'auth', 'switch'])).toBe('laptop work');
    expect(complete(['facectl', 'docs', 'get', '--profile'])).toBe('laptop work');
  });

  it('stdout closed early (| head): quiet exit', async () => {
    const child = spawn(process.execPath, [BIN, 'openapi'], {
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = watchChild(child);
    child.stdout.once('data', () => child.stdout.destroy());
    const { code } = await run.exit;
    expect(run.stderr()).toBe('');
    expect(code).toBe(0);
  });

  it('--version and --help load only the small entry chunks, nothing from node_modules', async () => {
    for (const args of [['--version'], ['--help']]) {
      const result = await runCli(args, { env: tracing() });
      expect(result.code).toBe(0);
      const ours = traced(result.stderr).files;
      expect(ours).toContain(join(ROOT, 'dist', 'cli.cjs'));
      expect(ours.every((f) => f.startsWith(join(ROOT, 'dist')) || f === BIN)).toBe(true);
      // zod, undici, conf and the prompts each weigh hundreds of KB bundled; commander and the tree ~150 KB.
      const bytes = ours.reduce((sum, f) => sum + statSync(f).size, 0);
      expect(bytes).toBeLessThan(400_000);
    }
  });

  it('the package exports the client and the contract', async () => {
    const result = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          "const m = await import('facectl'); const c = await import('facectl/contract'); console.log(typeof m.createClient, typeof c.routes.createFace.response.parse, typeof m.routes.getDocument);",
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      child.on('close', () => resolve(out.trim()));
      child.on('error', reject);
    });
    expect(result).toBe('function function object');
  });
});

describe('terminal form through a pseudo-terminal', () => {
  it('auth login asks for the key (hidden) and stores it', async () => {
    const configDir = makeConfigDir();
    const key = serve.key('connect');
    const command = `node ${BIN} auth login --base-url ${serve.baseUrl}`;
    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn('script', ['-qefc', command, '/dev/null'], {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: configDir,
          TERM: 'xterm',
          NO_COLOR: '1',
          FACECTL_CONFIG_DIR: configDir,
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      let typed = false;
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        // Type the key once the prompt is drawn, as a person would.
        if (!typed && output.includes('Paste your API key')) {
          typed = true;
          child.stdin.write(`${key}\r`);
        }
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
    expect(result.code).toBe(0);
    expect(result.output).toContain('Paste your API key');
    expect(result.output).toContain(
      `Logged in to ${serve.baseUrl} with key ${key.slice(0, 12)}… (profile default, connect plan)`,
    );
    // The password prompt hides what is typed: neither the key nor one * per character.
    expect(result.output).not.toContain(key);
    expect(result.output).not.toMatch(/\*{8}/);
    const stored = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));
    expect(stored.profiles.default.api_key).toBe(key);
  });
});

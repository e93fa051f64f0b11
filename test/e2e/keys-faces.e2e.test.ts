import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT, makeConfigDir, runCli } from '../helpers/run-cli.js';
import { useFaultServer, useServe } from '../helpers/hooks.js';
import { readBack } from '../helpers/serve-process.js';
import { call, createFace, expectContract } from '../helpers/service.js';

/** keys create, faces create/get and import, run as the built bin against `facectl serve`. */

const service = useServe({ args: ['--allow-private-urls'] });
/** Pages to import: every path is the same short text, but /missing.txt, which is 404. */
const pages = useFaultServer((req, res) => {
  res.writeHead(req.url === '/missing.txt' ? 404 : 200, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end('An essay on the Analytical Engine.\n');
});
const env = (plan: 'pro' | 'connect' | 'free' = 'pro') => service.env(plan);

describe('keys create (built bin)', () => {
  it('script form: --json --no-input prints the key object once; the key works', async () => {
    const result = await runCli(
      ['keys', 'create', '--name', 'ci', '--scopes', 'v1:faces:read', '--expires-in-days', '7', '--json', '--no-input'],
      { env: env() },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const key = JSON.parse(result.stdout);
    expect(key.key).toMatch(/^fcs_/);
    const current = expectContract('getCurrentApiKey', await call(service, 'getCurrentApiKey', { key: key.key }), 200);
    expect(current).toMatchObject({ name: 'ci', scopes: ['v1:faces:read'], key_prefix: key.key_prefix });
  });

  it('--save stores the key in the config file (mode 0600) and later commands use it', async () => {
    const saved = await runCli(['keys', 'create', '--name', 'saved', '--save', '--base-url', service.baseUrl], {
      env: { FACECTL_API_KEY: service.key('pro') },
    });
    expect(saved.code, saved.stderr).toBe(0);
    const key = /^key\t(\S+)$/m.exec(saved.stdout)?.[1] as string;
    const configFile = join(saved.configDir, 'config.json');
    expect(JSON.parse(readFileSync(configFile, 'utf8')).profiles.default).toMatchObject({
      api_key: key,
      base_url: service.baseUrl,
    });
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    expect(saved.stderr).toContain('Saved key');
    expect(saved.stderr).not.toContain(key);

    // No FACECTL_API_KEY now: the stored key and base URL are used.
    const face = await runCli(['faces', 'create', '--name', 'Saved', '--alias', 'saved-key-face', '--json'], {
      env: { FACECTL_CONFIG_DIR: saved.configDir },
    });
    expect(face.code, face.stderr).toBe(0);

    // Saving another over it wants --yes (no terminal here): the hint says both ways, with nothing to fill in.
    const again = await runCli(['keys', 'create', '--name', 'again', '--save'], {
      env: { FACECTL_CONFIG_DIR: saved.configDir },
    });
    expect(again.code).toBe(2);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(
      `error: --yes is required to replace the key stored in profile default (${key.slice(0, 12)}…) when not ` +
        'running interactively (standard input is not a terminal)\n' +
        'to keep both, save the new key in a new profile: give --profile a name no profile has yet; ' +
        'or add `--yes` to replace it\n',
    );
  });

  it('bad values are exit 2 naming the flag, nothing sent', async () => {
    const before = await service.settledRequests();
    for (const argv of [
      ['--expires-in-days', '1.5'],
      ['--scopes', 'admin'],
      ['--budget-usd', '1e309'],
    ]) {
      const result = await runCli(['keys', 'create', ...argv, '--json', '--no-input'], { env: env() });
      expect(result.code).toBe(2);
      // Under --json, stderr is the one JSON error document.
      const { error } = JSON.parse(result.stderr);
      expect(error.message).toContain(`${argv[0]}: `);
      expect(error.code).toBe('usage');
    }
    expect(await service.settledRequests()).toBe(before);
    // The count does move when a request is sent (so the assertion above can fail).
    expect((await runCli(['keys', 'create', '--json'], { env: env() })).code).toBe(0);
    expect(await service.settledRequests()).toBe(before + 1);
  });
});

describe('faces (built bin)', () => {
  it('create: script form with --basic-facts from stdin; get reads it back', async () => {
    const created = await runCli(
      [
        'faces',
        'create',
        '--name',
        'Ada Lovelace',
        '--alias',
        'ada-lovelace',
        '--basic-facts',
        '-',
        '--default-tools',
        'search,calc',
        '--json',
        '--no-input',
      ],
      { env: env(), stdin: '{"born": 1815}' },
    );
    expect(created.code, created.stderr).toBe(0);
    const face = JSON.parse(created.stdout);
    const stored = await readBack(service, 'getFace', { face_id: 'ada-lovelace' });
    expect(face).toEqual(stored);
    expect(stored).toMatchObject({ basic_facts: { born: 1815 }, default_tools: ['search', 'calc'] });

    const got = await runCli(['faces', 'get', face.uid], { env: env() });
    expect(got.code).toBe(0);
    expect(got.stdout).toContain('alias\tada-lovelace\n');
  });

  it('a missing --alias without a terminal is exit 2 naming the flag, nothing sent; a bad one is refused by the service, stating its rule', async () => {
    const before = await service.settledRequests();
    const missing = await runCli(['faces', 'create', '--name', 'X'], { env: env() });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--alias is required when not running interactively');
    expect(await service.settledRequests()).toBe(before);
    // The slug rule is facectl serve's own (the seed says only "a slug"): sent, answered 422.
    const bad = await runCli(['faces', 'create', '--name', 'X', '--alias', 'Ada Lovelace'], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('status: 422 validation_error');
    expect(bad.stderr).toContain('lower-case letters, digits and single hyphens, 3 to 64 characters');
    expect(await service.settledRequests()).toBe(before + 1);
  });
});

describe('--jq (built bin)', () => {
  it('an expression nested too deeply for jq-web (it crashes on it) is exit 2 with one error document, nothing sent', async () => {
    const before = await service.settledRequests();
    const nested = `${'['.repeat(512)}.${']'.repeat(512)}`;
    const result = await runCli(['faces', 'create', '--name', 'Deep', '--alias', 'deep-jq-face', '--jq', nested], {
      env: env(),
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    // The engine's own "Aborted()" line is not printed: stderr is exactly the one JSON document.
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('invalid_jq');
    // The check compiles without running the filter, so the nesting that crashes jq-web when run is refused unseen.
    expect(error.message).toBe('--jq: the expression nests brackets 512 deep; at most 256');
    expect(await service.settledRequests()).toBe(before);
    const face = await call(service, 'getFace', { key: service.key('pro'), params: { face_id: 'deep-jq-face' } });
    expect(face.status).toBe(404);
  });
});

describe('import (built bin)', () => {
  it('imports a URL into the face; the document is stored with the URL as source', async () => {
    await createFace(service, service.key('pro'), 'ada-import');
    const result = await runCli(
      ['import', 'ada-import', `${pages.baseUrl}/essay.txt`, '--type', 'document', '--json', '--no-input'],
      { env: env() },
    );
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout);
    const stored = await readBack(service, 'getDocument', { document_id: doc.document_id });
    expect(stored).toMatchObject({
      source: `${pages.baseUrl}/essay.txt`,
      content: 'An essay on the Analytical Engine.\n',
      synced: false,
    });
    expect(result.stderr).toContain('is a preview: nothing is charged until sync');
  });

  it("a URL that answers 404: exit 1 (a failure, not a usage error), the service's reason and a hint about the URL", async () => {
    await createFace(service, service.key('pro'), 'ada-missing');
    const url = `${pages.baseUrl}/missing.txt`;
    const result = await runCli(['import', 'ada-missing', url], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: the service could not import the URL: ${url} answered HTTP 404\n` +
        '  status: 422 fetch_failed\n' +
        'check the URL: the server there answered HTTP 404 (no such page there)\n',
    );
  });

  it("--type outside the local service's set: sent, refused by it with 422 listing its values", async () => {
    const result = await runCli(['import', 'ada-lovelace', `${pages.baseUrl}/x`, '--type', 'video'], { env: env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('status: 422 validation_error');
    expect(result.stderr).toMatch(/- type: .*"document".*"transcript"/);
  });

  it('a filter that never ends passes the check (it is valid), the face is created; on the answer it hangs as jq would, and Ctrl-C or SIGTERM still ends it', async () => {
    for (const [filter, signal, alias] of [
      ['def f: f; f', 'SIGINT', 'never-ends-int'],
      ['until(false; .)', 'SIGTERM', 'never-ends-term'],
    ] as const) {
      const before = await service.settledRequests();
      const child = spawn(
        process.execPath,
        [BIN, 'faces', 'create', '--name', 'Loop', '--alias', alias, '--jq', filter],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH, HOME: '/tmp', NO_COLOR: '1', ...env(), FACECTL_CONFIG_DIR: makeConfigDir() },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        child.on('close', (code, sig) => resolve([code, sig])),
      );
      // The old check ran the filter on null and spun there forever: nothing was ever sent.
      const deadline = Date.now() + 15_000;
      while ((await service.settledRequests()) === before && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      const face = await call(service, 'getFace', { key: service.key('pro'), params: { face_id: alias } });
      expect(face.status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
      child.kill(signal);
      // jq runs synchronously: the signal's own default action ends the process (a shell says 130 / 143).
      expect(await exited).toEqual([null, signal]);
      expect(output).toBe('');
    }
  });
});

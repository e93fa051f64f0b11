import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConfigStore } from '../../src/config/file-store.js';
import { checkApiKey, resolveCredentials } from '../../src/config/credentials.js';
import { ConfigFileError } from '../../src/config/profile-store.js';
import { createMemoryConfigStore } from '../helpers/memory-config.js';
import type { ConfigStore, GlobalOptions } from '../../src/context.js';
import { ExitCode, UsageError } from '../../src/errors.js';
import { readFirstLine } from '../../src/io/stdin.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'facectl-conf-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

describe('the conf-backed store', () => {
  it('writes $FACECTL_CONFIG_DIR/config.json with mode 0600 in a 0700 directory', async () => {
    const dir = join(root, 'facectl');
    const store = openConfigStore({ FACECTL_CONFIG_DIR: dir }, () => {});
    await store.updateProfile('work', { base_url: 'https://api.example.com' });
    await store.updateProfile('work', { api_key: 'fcs_abcdefgh_secret' });
    expect(store.path).toBe(join(dir, 'config.json'));
    expect(mode(dir)).toBe(0o700);
    expect(mode(store.path)).toBe(0o600);
    expect(JSON.parse(readFileSync(store.path, 'utf8'))).toEqual({
      profiles: { work: { base_url: 'https://api.example.com', api_key: 'fcs_abcdefgh_secret' } },
    });
    await store.updateProfile('work', { api_key: undefined });
    expect(store.getProfile('work')).toEqual({ base_url: 'https://api.example.com' });
    expect(mode(store.path)).toBe(0o600);
  });

  it('treats profile names with dots as names, not paths', async () => {
    const store = openConfigStore({ FACECTL_CONFIG_DIR: root }, () => {});
    await expect(store.updateProfile('a.b', { base_url: 'x' })).rejects.toThrow(UsageError);
    await store.updateProfile('prod-eu_1', { base_url: 'https://eu.example.com' });
    expect(store.listProfiles()).toEqual(['prod-eu_1']);
  });

  it('reports a corrupt file by path, exit 2, and never clears or rewrites it', async () => {
    const path = join(root, 'config.json');
    writeFileSync(path, '{"profiles": {"default": {"api_key": "fcs_', { mode: 0o600 });
    let error: unknown;
    try {
      const store = openConfigStore({ FACECTL_CONFIG_DIR: root }, () => {});
      await store.updateProfile('default', { base_url: 'https://x.example.com' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigFileError);
    expect((error as ConfigFileError).exitCode).toBe(ExitCode.usage);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain('not valid JSON');
    expect(readFileSync(path, 'utf8')).toBe('{"profiles": {"default": {"api_key": "fcs_');
  });

  it('reports a file of the wrong shape, naming the part that is wrong', () => {
    const path = join(root, 'config.json');
    writeFileSync(path, '{"profiles": ["default"]}', { mode: 0o600 });
    const store = openConfigStore({ FACECTL_CONFIG_DIR: root }, () => {});
    expect(() => store.getProfile('default')).toThrow(/config\.json is invalid: profiles must be an object/);
    expect(readFileSync(path, 'utf8')).toBe('{"profiles": ["default"]}');
    // A setting of another type is refused, not read as unset (a breaker's base_url of 5 went to the default URL).
    writeFileSync(path, '{"profiles": {"default": {"base_url": 5}}}');
    expect(() => store.getProfile('default')).toThrow(
      /config\.json is invalid: profiles\.default\.base_url must be a string/,
    );
    writeFileSync(path, '{"profiles": {"w": {"api_key": null}}}');
    expect(() => store.getProfile('w')).toThrow(/invalid: profiles\.w\.api_key must be a string/);
  });

  it('warns about a file another tool left at 0644 and makes it 0600', () => {
    const path = join(root, 'config.json');
    writeFileSync(path, '{"profiles": {"default": {"api_key": "fcs_abcdefgh_x"}}}');
    chmodSync(path, 0o644);
    const warnings: string[] = [];
    const store = openConfigStore({ FACECTL_CONFIG_DIR: root }, (m) => warnings.push(m));
    expect(warnings).toEqual([`configuration file ${path} had mode 0644; changed it to 0600`]);
    expect(mode(path)).toBe(0o600);
    expect(store.getProfile('default').api_key).toBe('fcs_abcdefgh_x');
  });

  it('keeps default_profile and other profiles when one changes', async () => {
    const store = openConfigStore({ FACECTL_CONFIG_DIR: root }, () => {});
    await store.updateProfile('a', { base_url: 'https://a.example.com' });
    await store.setDefaultProfile('b');
    await store.updateProfile('b', { base_url: 'https://b.example.com' });
    expect(store.defaultProfile).toBe('b');
    expect(store.getGlobal('default_profile')).toBe('b');
    expect(store.listProfiles()).toEqual(['a', 'b']);
    await store.setDefaultProfile(undefined);
    expect(store.defaultProfile).toBe('default');
  });
});

describe('credential precedence', () => {
  const globals = (extra: Partial<GlobalOptions> = {}): GlobalOptions => ({
    json: false,
    noInput: true,
    debug: false,
    insecureHttp: false,
    ...extra,
  });
  const memory = () =>
    createMemoryConfigStore({
      default_profile: 'work',
      profiles: {
        work: { api_key: 'fcs_profile1_stored', base_url: 'https://work.example.com' },
        home: { api_key: 'fcs_profile2_home', base_url: 'https://home.example.com' },
      },
    });
  const resolve = (opts: {
    env?: Record<string, string>;
    g?: Partial<GlobalOptions>;
    stdin?: string;
    config?: () => Promise<ConfigStore>;
  }) =>
    resolveCredentials({
      env: opts.env ?? {},
      globals: globals(opts.g),
      stdin: Readable.from([Buffer.from(opts.stdin ?? '')]),
      stdinIsTTY: false,
      config: opts.config ?? (async () => memory()),
    });

  it('uses the default profile when nothing else is given', async () => {
    const creds = await resolve({});
    expect(creds.profile).toBe('work');
    expect([creds.baseUrl, creds.baseUrlSource]).toEqual(['https://work.example.com', 'profile']);
    expect(await creds.apiKey()).toEqual({ key: 'fcs_profile1_stored', source: 'profile' });
  });

  it('--profile beats FACECTL_PROFILE beats default_profile', async () => {
    expect((await resolve({ env: { FACECTL_PROFILE: 'home' } })).profile).toBe('home');
    expect((await resolve({ env: { FACECTL_PROFILE: 'home' }, g: { profile: 'work' } })).profile).toBe('work');
  });

  it('FACECTL_API_KEY beats the stored key; --api-key-stdin beats both', async () => {
    const env = { FACECTL_API_KEY: 'fcs_envkey01_x' };
    expect(await (await resolve({ env })).apiKey()).toEqual({ key: 'fcs_envkey01_x', source: 'env' });
    const fromStdin = await resolve({ env, g: { apiKeyStdin: true }, stdin: 'fcs_stdinkey_x\n' });
    expect(await fromStdin.apiKey()).toEqual({ key: 'fcs_stdinkey_x', source: 'stdin' });
  });

  it('--base-url beats FACECTL_BASE_URL beats the profile', async () => {
    const env = { FACECTL_BASE_URL: 'https://env.example.com/' };
    const fromEnv = await resolve({ env });
    expect([fromEnv.baseUrl, fromEnv.baseUrlSource]).toEqual(['https://env.example.com', 'env']);
    const fromFlag = await resolve({ env, g: { baseUrl: 'http://127.0.0.1:9999' } });
    expect([fromFlag.baseUrl, fromFlag.baseUrlSource]).toEqual(['http://127.0.0.1:9999', 'flag']);
  });

  it('falls back to http://127.0.0.1:8787 with no key', async () => {
    const creds = await resolve({ config: async () => createMemoryConfigStore() });
    expect([creds.baseUrl, creds.baseUrlSource, creds.profile]).toEqual([
      'http://127.0.0.1:8787',
      'default',
      'default',
    ]);
    expect(await creds.apiKey()).toBeUndefined();
  });

  it('sends a stored key to its own base URL however it is spelled, and to no other (not even another port or path)', async () => {
    for (const same of ['https://WORK.example.com/', 'https://work.example.com:443', 'HTTPS://work.example.com//']) {
      expect(await (await resolve({ g: { baseUrl: same } })).apiKey(), same).toEqual({
        key: 'fcs_profile1_stored',
        source: 'profile',
      });
    }
    for (const other of ['https://work.example.com:444', 'https://work.example.com/v2', 'http://work.example.com']) {
      const creds = await resolve({ g: { baseUrl: other } });
      expect(creds.keyBaseUrl).toBe('https://work.example.com');
      await expect(creds.apiKey(), other).rejects.toMatchObject({
        exitCode: ExitCode.auth,
        code: 'key_for_other_base_url',
        // A ring's find: after `serve --data` restarted on another port, only a new login was offered.
        hint: expect.stringContaining(
          `run \`facectl auth login --stored-key --base-url ${other.replace(/\/$/, '')} --profile`,
        ),
      });
    }
  });

  it('does not open the config file when the environment settles key and URL', async () => {
    const creds = await resolve({
      env: { FACECTL_API_KEY: 'fcs_envkey01_x', FACECTL_BASE_URL: 'http://127.0.0.1:1' },
      config: async () => {
        throw new Error('config opened');
      },
    });
    expect((await creds.apiKey())?.source).toBe('env');
  });

  it('a key given with its `Bearer ` scheme (copied from a header): refused, the hint says to drop it', () => {
    expect(() => checkApiKey('Bearer fcs_abcdefgh_ok', 'env')).toThrow(
      expect.objectContaining({ hint: 'give the key without the `Bearer ` before it (facectl sends that itself)' }),
    );
  });

  it('refuses a key with a newline, inner whitespace or control characters, without echoing it', () => {
    expect(checkApiKey('  fcs_abcdefgh_ok\n', 'env')).toBe('fcs_abcdefgh_ok');
    for (const bad of ['fcs_abc\ndefgh', 'fcs_abc defgh', 'fcs_abc\u0007defgh', 'fcs_abcé']) {
      let error: unknown;
      try {
        checkApiKey(bad, 'env');
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toContain('FACECTL_API_KEY');
      expect((error as Error).message).not.toContain('abc');
    }
  });
});

describe('readFirstLine', () => {
  it('returns the first line and leaves the rest readable', async () => {
    const stream = Readable.from([Buffer.from('fcs_key_1\r\n{"alias":'), Buffer.from('"ada"}\n')]);
    expect(await readFirstLine(stream)).toBe('fcs_key_1');
    const rest: Buffer[] = [];
    for await (const chunk of stream) rest.push(chunk as Buffer);
    expect(Buffer.concat(rest).toString()).toBe('{"alias":"ada"}\n');
  });
});

describe('read back after writing', () => {
  it('a change the file does not hold afterwards is an error, not a success', async () => {
    const { ProfileStore, ConfigWriteError } = await import('../../src/config/profile-store.js');
    // A backend whose file is rewritten by someone else between our write and the read-back.
    const store = new ProfileStore({
      path: '/x/config.json',
      read: () => ({}),
      update: async (change) => {
        change({});
        return { profiles: { other: { base_url: 'https://other.example.com' } } };
      },
    });
    await expect(store.updateProfile('work', { api_key: 'fcs_abcdefgh_x' })).rejects.toThrow(ConfigWriteError);
    await expect(store.updateProfile('work', { api_key: 'fcs_abcdefgh_x' })).rejects.toThrow(
      /api_key of profile work was not in the file when read back/,
    );
    await expect(store.setDefaultProfile('work')).rejects.toThrow(/default_profile was not in the file/);
  });

  it('keeps every profile when writers interleave in one process too (each change re-reads the file)', async () => {
    const a = openConfigStore({ FACECTL_CONFIG_DIR: root }, () => {});
    const b = openConfigStore({ FACECTL_CONFIG_DIR: root }, () => {});
    await a.updateProfile('a', { base_url: 'https://a.example.com' });
    await b.updateProfile('b', { base_url: 'https://b.example.com' });
    await a.updateProfile('a', { api_key: 'fcs_abcdefgh_a' });
    expect(JSON.parse(readFileSync(join(root, 'config.json'), 'utf8')).profiles).toEqual({
      a: { base_url: 'https://a.example.com', api_key: 'fcs_abcdefgh_a' },
      b: { base_url: 'https://b.example.com' },
    });
  });
});

describe('what a killed writer leaves', () => {
  it('the next write removes temp files left beside the config (they may hold a key) and nothing else', async () => {
    const left = join(root, 'config.json.4242.0badf00d.tmp');
    writeFileSync(left, '{"profiles":{"x":{"api_key":"fcs_abcdefgh_leftover"}}}', { mode: 0o600 });
    writeFileSync(join(root, 'notes.tmp'), 'mine');
    const store = openConfigStore({ FACECTL_CONFIG_DIR: root }, () => {});
    await store.updateProfile('work', { base_url: 'https://api.example.com' });
    expect(readdirSync(root).sort()).toEqual(['config.json', 'notes.tmp']);
  });
});

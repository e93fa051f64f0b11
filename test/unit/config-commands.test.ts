import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { run } from '../../src/main.js';
import { createTestContext, type TestContextOptions } from '../helpers/test-context.js';

async function cli(argv: string[], options: TestContextOptions = {}) {
  const tc = createTestContext(options);
  const code = await run(argv, tc.ctx);
  return { code, stdout: tc.stdout(), stderr: tc.stderr(), tc };
}

const KEY = 'fcs_abcdefgh_0123456789abcdefghijABCDEFGHIJ';

describe('config set / get / unset', () => {
  it('sets base_url in the active profile and reads it back', async () => {
    const set = await cli(['config', 'set', 'base_url', 'https://api.example.com/', '--profile', 'work']);
    expect(set.code).toBe(0);
    expect(set.tc.config.data).toEqual({ profiles: { work: { base_url: 'https://api.example.com' } } });

    const get = await cli(['config', 'get', 'base_url'], {
      config: set.tc.config.data,
      env: { FACECTL_PROFILE: 'work' },
    });
    expect(get.code).toBe(0);
    expect(get.stdout).toBe('https://api.example.com\n');
  });

  it('refuses an invalid URL: exit 2, nothing stored', async () => {
    const { code, stderr, tc } = await cli(['config', 'set', 'base_url', 'ftp://x']);
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toContain('base_url: must use http or https');
    expect(tc.config.data).toEqual({});
  });

  it('refuses `config set api_key` and points to auth login', async () => {
    const { code, stderr, tc } = await cli(['config', 'set', 'api_key', KEY]);
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toContain('api_key cannot be set with `config set`');
    expect(stderr.trimEnd().split('\n').at(-1)).toContain('facectl auth login');
    expect(stderr).not.toContain(KEY);
    expect(tc.config.data).toEqual({});
  });

  it('an unknown key lists the known ones: set and unset only those they take, get all', async () => {
    for (const args of [
      ['set', 'colour', 'blue'],
      ['unset', 'colour'],
    ]) {
      const { code, stderr } = await cli(['config', ...args]);
      expect(code).toBe(ExitCode.usage);
      expect(stderr).toContain('unknown setting "colour"');
      expect(stderr).toContain('known settings: base_url, default_profile\n');
    }
    const get = await cli(['config', 'get', 'colour']);
    expect(get.stderr).toContain('known settings: base_url, api_key, api_key_base_url, default_profile\n');
    // The two left out say what to use instead.
    for (const key of ['api_key', 'api_key_base_url']) {
      const { code, stderr } = await cli(['config', 'unset', key], { apiKey: KEY });
      expect(code).toBe(ExitCode.usage);
      expect(stderr).toBe(
        `error: ${key} is removed with the key, by \`facectl auth logout\`\nrun \`facectl auth logout\`\n`,
      );
    }
  });

  it('get api_key shows only the prefix; an unset value is exit 1', async () => {
    const shown = await cli(['config', 'get', 'api_key'], { apiKey: KEY });
    expect(shown.stdout).toBe('fcs_abcdefgh…\n');
    const unset = await cli(['config', 'get', 'base_url', '--json'], { apiKey: KEY });
    expect(unset.code).toBe(ExitCode.error);
    expect(JSON.parse(unset.stdout)).toEqual({ key: 'base_url', value: null, profile: 'default' });
    expect(JSON.parse(unset.stderr).error.message).toBe('base_url is not set in profile "default"');
  });

  it('unset of a setting that is not set says so: exit 0, nothing changed, removed: false under --json', async () => {
    const config = { profiles: { work: { api_key: KEY, api_key_base_url: 'http://127.0.0.1:9' } } };
    const human = await cli(['config', 'unset', 'base_url', '--profile', 'work'], { config });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toBe('base_url is not set in profile work; nothing to remove\n');
    expect(human.tc.config.data).toEqual(config);
    const json = await cli(['config', 'unset', 'base_url', '--profile', 'work', '--json'], { config });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      key: 'base_url',
      value: null,
      profile: 'work',
      removed: false,
      config_file: '/test/facectl/config.json',
    });
    expect(json.tc.config.data).toEqual(config);
    const nothing = await cli(['config', 'unset', 'default_profile'], { config });
    expect(nothing.stderr).toBe('default_profile is not set; nothing to remove\n');
    // Set, it is removed and said so.
    const set = { profiles: { work: { base_url: 'http://127.0.0.1:9' } } };
    const removed = await cli(['config', 'unset', 'base_url', '--profile', 'work', '--json'], { config: set });
    expect(JSON.parse(removed.stdout)).toMatchObject({ key: 'base_url', value: null, removed: true });
    expect(removed.tc.config.data).toEqual({ profiles: { work: {} } });
    const said = await cli(['config', 'unset', 'base_url', '--profile', 'work'], { config: set });
    expect(said.stderr).toBe('Removed base_url in profile work\n');
  });

  it('unset in a profile that does not exist is refused as get is: exit 2, no profile named, nothing written', async () => {
    const config = { profiles: { work: { base_url: 'http://127.0.0.1:9' } } };
    for (const [args, env] of [
      [['--profile', 'nope'], {}],
      [[], { FACECTL_PROFILE: 'nope' }],
    ] as const) {
      const get = await cli(['config', 'get', 'base_url', ...args], { config, env });
      const unset = await cli(['config', 'unset', 'base_url', ...args], { config, env });
      expect(unset.code, unset.stderr).toBe(2);
      expect(unset.stderr).toContain('error: no profile named "nope"');
      expect(unset.stderr.split('\n')[0]).toBe(get.stderr.split('\n')[0]);
      expect(unset.tc.config.data).toEqual(config);
      const json = await cli(['config', 'unset', 'base_url', '--json', ...args], { config, env });
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stderr).error.code).toBe('unknown_profile');
      expect(json.stdout).toBe('');
    }
  });

  it('default_profile picks the profile later commands use', async () => {
    const refused = await cli(['config', 'set', 'default_profile', 'work']);
    expect(refused.code).toBe(2); // no such profile yet
    expect(refused.tc.config.data).toEqual({});
    const made = await cli(['config', 'set', 'base_url', 'http://127.0.0.1:8000', '--profile', 'work']);
    const set = await cli(['config', 'set', 'default_profile', 'work'], { config: made.tc.config.data });
    expect(set.tc.config.data.default_profile).toBe('work');
    const next = await cli(['config', 'set', 'base_url', 'http://127.0.0.1:9000'], { config: set.tc.config.data });
    expect(next.tc.config.data.profiles).toEqual({ work: { base_url: 'http://127.0.0.1:9000' } });
    const unset = await cli(['config', 'unset', 'default_profile'], { config: next.tc.config.data });
    expect(unset.tc.config.data).toEqual({ profiles: { work: { base_url: 'http://127.0.0.1:9000' } } });
  });
});

describe('config get default_profile and config list agree', () => {
  it('default_profile unset: both name the profile "default", which commands use', async () => {
    const config = {
      profiles: { default: { base_url: 'http://127.0.0.1:1' }, work: { base_url: 'http://127.0.0.1:2' } },
    };
    const table = await cli(['config', 'list'], { config, stdoutIsTTY: true, env: { NO_COLOR: '1' } });
    expect(table.stdout).toMatch(/^default \*\s+base_url/m);
    expect(table.stdout).toMatch(/^\s+default_profile\s+default$/m);
    const listed = await cli(['--json', 'config', 'list'], { config });
    expect(JSON.parse(listed.stdout)).toMatchObject({ default_profile: 'default', active_profile: 'default' });
    const get = await cli(['config', 'get', 'default_profile'], { config });
    expect({ code: get.code, stdout: get.stdout, stderr: get.stderr }).toEqual({
      code: 0,
      stdout: 'default\n',
      stderr: '',
    });
    const json = await cli(['config', 'get', 'default_profile', '--json'], { config });
    expect(JSON.parse(json.stdout)).toEqual({ key: 'default_profile', value: 'default', profile: null });
    // Set, both say the profile set.
    const set = { ...config, default_profile: 'work' };
    expect((await cli(['config', 'get', 'default_profile'], { config: set })).stdout).toBe('work\n');
    expect((await cli(['config', 'list'], { config: set })).stdout).toContain('\tdefault_profile\twork\n');
  });
});

describe('config list', () => {
  const config = {
    default_profile: 'work',
    profiles: {
      work: { api_key: KEY, base_url: 'https://api.example.com' },
      local: { base_url: 'http://127.0.0.1:8787' },
    },
  };

  it('piped: tab-separated rows with the key as its prefix; the file and the active profile as rows, as in --json', async () => {
    const { code, stdout } = await cli(['config', 'list'], { config, env: { FACECTL_PROFILE: 'local' } });
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        '\tconfig_file\t/test/facectl/config.json',
        '\tdefault_profile\twork',
        '\tactive_profile\tlocal',
        'local\tbase_url\thttp://127.0.0.1:8787',
        'work\tapi_key\tfcs_abcdefgh…',
        'work\tbase_url\thttps://api.example.com',
        '',
      ].join('\n'),
    );
    expect(stdout).not.toContain(KEY);
  });

  it('--json: one document with the file, the active profile and every profile', async () => {
    const { stdout } = await cli(['--json', 'config', 'list'], { config, env: { FACECTL_PROFILE: 'local' } });
    expect(JSON.parse(stdout)).toEqual({
      config_file: '/test/facectl/config.json',
      default_profile: 'work',
      active_profile: 'local',
      profiles: {
        local: { base_url: 'http://127.0.0.1:8787' },
        work: { api_key: 'fcs_abcdefgh…', base_url: 'https://api.example.com' },
      },
    });
  });

  it('--profile NAME lists that profile only, as config get and set act on it; an unknown one is exit 2', async () => {
    const piped = await cli(['config', 'list', '--profile', 'local'], { config });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe('\tconfig_file\t/test/facectl/config.json\nlocal\tbase_url\thttp://127.0.0.1:8787\n');
    const json = await cli(['--json', 'config', 'list', '--profile', 'work'], { config });
    expect(JSON.parse(json.stdout)).toEqual({
      config_file: '/test/facectl/config.json',
      default_profile: 'work',
      active_profile: 'work',
      profiles: { work: { api_key: 'fcs_abcdefgh…', base_url: 'https://api.example.com' } },
    });
    expect(json.stdout).not.toContain(KEY);
    const unknown = await cli(['config', 'list', '--profile', 'nope'], { config });
    expect(unknown.code).toBe(ExitCode.usage);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('no profile named "nope" (--profile)');
  });

  it('terminal: a table marking the active profile, and the file on stderr', async () => {
    const { stdout, stderr } = await cli(['config', 'list'], { config, stdoutIsTTY: true, env: { NO_COLOR: '1' } });
    expect(stdout.split('\n')[0]).toMatch(/^PROFILE\s+KEY\s+VALUE$/);
    expect(stdout).toMatch(/work \*\s+api_key\s+fcs_abcdefgh…/);
    expect(stderr).toContain('/test/facectl/config.json');
  });
});

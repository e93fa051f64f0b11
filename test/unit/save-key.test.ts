import { describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/command-harness.js';
import { currentKeyBody, json } from '../helpers/fault-server.js';
import { useFaultServer } from '../helpers/hooks.js';
import { requestCount } from '../helpers/command-harness.js';
import { createKey, useService } from '../helpers/service-suite.js';
import { argv, runInProcess as cli, expectRefused } from '../helpers/unit-harness.js';
import { createTestContext } from '../helpers/test-context.js';
import { run } from '../../src/main.js';

/** `auth login` and `keys create --save` store a key in a profile: what they say when that replaces one. */

const service = useService();

const OLD_KEY = `fcs_oldoldol_${'k'.repeat(32)}`;
const OTHER_URL = 'https://other.example';

describe('saving a key over another one', () => {
  it('auth login: saves, and warns naming the old key by prefix, its base URL and how to keep both', async () => {
    const key = service.key('pro');
    const { code, stdout, stderr, tc } = await cli(
      ['auth', 'login', '--api-key-stdin', '--base-url', service.baseUrl],
      {
        stdin: `${key}\n`,
        config: { profiles: { default: { api_key: OLD_KEY, api_key_base_url: OTHER_URL, base_url: OTHER_URL } } },
      },
    );
    expect(code, stderr).toBe(0);
    expect(stdout).toBe('');
    expect(tc.config.data.profiles?.default).toEqual({
      api_key: key,
      api_key_base_url: service.baseUrl,
      base_url: service.baseUrl,
    });
    expect(stderr).toContain(
      `warning: replaced key ${OLD_KEY.slice(0, 12)}… (saved for ${OTHER_URL}) in profile default; ` +
        'it is not kept anywhere else. To keep both, save each key in a profile of its own with --profile NAME',
    );
    expect(stderr).not.toContain(OLD_KEY);
    expect(stderr).not.toContain(key);
  });

  it('keys create --save --yes: the key it authenticated with is named as replaced, never shown whole', async () => {
    const creating = service.key('pro');
    const result = await runCommand(service, ['keys', 'create', '--name', 'laptop', '--save', '--yes', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const made = JSON.parse(result.stdout) as { key: string; key_prefix: string };
    expect(result.tc.config.data.profiles?.default).toEqual({
      api_key: made.key,
      api_key_base_url: service.baseUrl,
      base_url: service.baseUrl,
    });
    // Under --json every stderr line is JSON: the replaced key a warning, the save a notice.
    const said = result.stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    expect(said).toEqual([
      {
        warning:
          `replaced key ${creating.slice(0, 12)}… (saved for ${service.baseUrl}) in profile default; ` +
          'it is not kept anywhere else. To keep both, save each key in a profile of its own with --profile NAME',
      },
      { notice: `Saved key ${made.key_prefix}… in profile "default" (${result.tc.config.path}).` },
    ]);
    expect(result.stderr).not.toContain(creating);
    expect(result.stderr).not.toContain(made.key);
  });

  it('keys create --save over a stored key, no terminal, no --yes: exit 2 naming both ways, nothing sent, key kept', async () => {
    const home = { api_key: OLD_KEY, api_key_base_url: service.baseUrl, base_url: service.baseUrl };
    // With --profile given too, the hint does not say to add it (a ring's find: "add --profile").
    for (const how of [[], ['--no-input'], ['--json'], ['--profile', 'default']]) {
      const before = requestCount(service);
      const { code, stdout, stderr, tc } = await cli(['keys', 'create', '--name', 'laptop', '--save', ...how], {
        config: { profiles: { default: home } },
        env: how.length ? { FACECTL_API_KEY: service.key('pro') } : {},
      });
      const why = how[0] === '--no-input' ? '--no-input' : 'standard input is not a terminal';
      const message =
        `--yes is required to replace the key stored in profile default (${OLD_KEY.slice(0, 12)}…) ` +
        `when not running interactively (${why})`;
      const hint =
        'to keep both, save the new key in a new profile: give --profile a name no profile has yet; or add `--yes` to replace it';
      expect(code, stderr).toBe(2);
      expect(stdout).toBe('');
      if (how[0] === '--json') expect(JSON.parse(stderr)).toEqual({ error: { code: 'usage', message, hint } });
      else expect(stderr).toBe(`error: ${message}\n${hint}\n`);
      expect(requestCount(service)).toBe(before);
      expect(tc.config.data.profiles).toEqual({ default: home });
    }
  });

  it('keys create --save on a terminal asks first: No keeps the stored key and sends nothing (exit 1), Yes replaces it', async () => {
    const creating = await createKey(service, service.key('pro'), { name: 'home' });
    const home = { api_key: creating.key, api_key_base_url: service.baseUrl, base_url: service.baseUrl };
    const onTerminal = (answer: boolean) =>
      cli(argv`keys create --name laptop --save`, {
        config: { profiles: { default: home } },
        stdinIsTTY: true,
        stdoutIsTTY: true,
        answers: [answer],
      });
    const before = requestCount(service);
    const declined = await onTerminal(false);
    expect(declined.code).toBe(1);
    expect(declined.tc.prompts).toEqual([
      {
        kind: 'confirm',
        message: `Replace the key stored in profile default (${creating.key_prefix}…)? It is not kept anywhere else.`,
      },
    ]);
    expect(declined.stdout).toBe('');
    // On a terminal the line is wrapped to its width: compared as words.
    expect(declined.stderr.replace(/\s+/g, ' ')).toBe(
      `Not replaced: profile default still holds key ${creating.key_prefix}…; no key was created ` +
        '(to keep both, run it again giving --profile a name no profile has yet) ',
    );
    expect(requestCount(service)).toBe(before);
    expect(declined.tc.config.data.profiles).toEqual({ default: home });

    const accepted = await onTerminal(true);
    expect(accepted.code, accepted.stderr).toBe(0);
    const made = accepted.stdout.match(/fcs_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}/)?.[0] as string;
    expect(accepted.tc.config.data.profiles?.default?.api_key).toBe(made);
    expect(accepted.stderr).toContain(`replaced key ${creating.key_prefix}…`);
  });

  it('keys create --save on a terminal: Yes to the key asked about, another stored meanwhile -> that one kept, the new key printed, exit 1', async () => {
    const asked = await createKey(service, service.key('pro'), { name: 'asked' });
    const meanwhile = await createKey(service, service.key('pro'), { name: 'meanwhile' });
    const home = (key: string) => ({ api_key: key, api_key_base_url: service.baseUrl, base_url: service.baseUrl });
    const tc = createTestContext({
      config: { profiles: { default: home(asked.key) } },
      stdinIsTTY: true,
      stdoutIsTTY: true,
      answers: [true],
    });
    // While the user answers, another command (`auth login`) stores its key in the profile.
    const { confirm } = tc.ctx.prompter;
    tc.ctx.prompter.confirm = async (question) => {
      const yes = await confirm(question);
      await tc.config.updateProfile('default', home(meanwhile.key));
      return yes;
    };
    const code = await run(argv`keys create --name laptop --save`, tc.ctx).finally(() => tc.close());
    expect(code).toBe(1);
    const made = tc.stdout().match(/fcs_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}/)?.[0] as string;
    expect(made).toBeDefined();
    expect(tc.config.data.profiles?.default).toEqual(home(meanwhile.key));
    // On a terminal the lines are wrapped to its width: compared as words.
    expect(tc.stderr().replace(/\s+/g, ' ')).toBe(
      `error: the key was created (shown above) but not saved: profile default now holds another key ` +
        `(${meanwhile.key_prefix}…), stored meanwhile, which was not replaced ` +
        'copy the key from above into `facectl auth login --profile <new-name>` to keep both (a name no profile has yet), or into ' +
        '`facectl auth login --profile default` to replace the other (`keys create --save --yes` replaces without asking) ',
    );
  });

  it('keys create --save into a profile without a key: saved without a question or --yes', async () => {
    for (const stdinIsTTY of [false, true]) {
      const { code, stdout, stderr, tc } = await cli(argv`keys create --name first --save`, {
        config: { profiles: { default: { base_url: service.baseUrl } } },
        env: { FACECTL_API_KEY: service.key('pro') },
        stdinIsTTY,
        stdoutIsTTY: stdinIsTTY,
      });
      expect(code, stderr).toBe(0);
      expect(tc.prompts).toEqual([]);
      const made = stdout.match(/fcs_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}/)?.[0] as string;
      expect(tc.config.data.profiles?.default?.api_key).toBe(made);
      expect(stderr).not.toContain('replaced');
    }
  });

  it('saving the key the profile already holds warns of nothing', async () => {
    const key = service.key('pro');
    const { code, stderr } = await cli(['auth', 'login', '--api-key-stdin'], {
      stdin: `${key}\n`,
      config: { profiles: { default: { api_key: key, api_key_base_url: service.baseUrl, base_url: service.baseUrl } } },
    });
    expect(code, stderr).toBe(0);
    expect(stderr).not.toContain('replaced');
  });
});

describe('the profile a key is saved in', () => {
  it('auth login --profile on a fresh file makes that profile the default one', async () => {
    const key = service.key('pro');
    const { code, stderr, tc } = await cli(
      ['auth', 'login', '--api-key-stdin', '--base-url', service.baseUrl, '--profile', 'std'],
      { stdin: `${key}\n` },
    );
    expect(code, stderr).toBe(0);
    expect(tc.config.data).toEqual({
      default_profile: 'std',
      profiles: { std: { api_key: key, api_key_base_url: service.baseUrl, base_url: service.baseUrl } },
    });
    expect(stderr).toContain('profile std is now the default profile');
  });

  it('keys create --save --profile on a fresh file (key from FACECTL_API_KEY) makes it the default one', async () => {
    const { code, stdout, stderr, tc } = await cli(['keys', 'create', '--save', '--profile', 'std', '--json'], {
      env: { FACECTL_API_KEY: service.key('pro'), FACECTL_BASE_URL: service.baseUrl },
    });
    expect(code, stderr).toBe(0);
    const made = JSON.parse(stdout) as { key: string };
    expect(tc.config.data).toEqual({
      default_profile: 'std',
      profiles: { std: { api_key: made.key, api_key_base_url: service.baseUrl, base_url: service.baseUrl } },
    });
    expect(stderr).toContain('profile std is now the default profile');
  });

  it("keys create --save --profile NEW: made with the default profile's key, saved in the new profile with its base URL", async () => {
    const creating = await createKey(service, service.key('pro'), { name: 'default-key' });
    const home = { api_key: creating.key, api_key_base_url: service.baseUrl, base_url: service.baseUrl };
    const before = requestCount(service);
    const { code, stdout, stderr, tc } = await cli(argv`keys create --name laptop --save --profile laptop`, {
      config: { profiles: { default: home } },
    });
    expect(code, stderr).toBe(0);
    const made = stdout.match(/^key\t(\S+)$/m)?.[1] as string;
    expect(stdout.split(made)).toHaveLength(2);
    expect(tc.config.data).toEqual({
      profiles: {
        default: home,
        laptop: { api_key: made, api_key_base_url: service.baseUrl, base_url: service.baseUrl },
      },
    });
    // One request (the POST), made with the default profile's key: the new key is its child.
    expect(requestCount(service)).toBe(before + 1);
    const children = [...service.store.values('keys')].filter((k) => k.parent_id === creating.id);
    expect(children.map((k) => [k.name, k.key_prefix])).toEqual([['laptop', made.slice(0, 12)]]);
    expect(stderr).toBe(
      `profile "laptop" does not exist yet: creating the key with key ${creating.key_prefix}… of profile "default" ` +
        `at ${service.baseUrl}, then saving it in a new profile "laptop"\n` +
        'profile laptop is not the default one (default); use it with --profile laptop, or make it the default with `facectl auth switch laptop`\n' +
        `Saved key ${made.slice(0, 12)}… in profile "laptop" (/test/facectl/config.json).\n`,
    );
  });

  it('keys create without --save still refuses an unknown --profile, nothing sent', async () => {
    await expectRefused(service, argv`keys create --name x --profile nosuch`, 'no profile named "nosuch" (--profile)');
  });

  it('beside another default profile: the default stays, and the hint says how to switch', async () => {
    const key = service.key('pro');
    const work = { api_key: OLD_KEY, api_key_base_url: OTHER_URL, base_url: OTHER_URL };
    const { code, stderr, tc } = await cli(
      ['auth', 'login', '--api-key-stdin', '--base-url', service.baseUrl, '--profile', 'std'],
      { stdin: `${key}\n`, config: { default_profile: 'work', profiles: { work } } },
    );
    expect(code, stderr).toBe(0);
    expect(tc.config.data).toEqual({
      default_profile: 'work',
      profiles: { work, std: { api_key: key, api_key_base_url: service.baseUrl, base_url: service.baseUrl } },
    });
    expect(stderr).toContain(
      'profile std is not the default one (work); use it with --profile std, or make it the default with `facectl auth switch std`',
    );
    expect(stderr).not.toContain('replaced');
  });
});

describe('keys create --save of a key the client would refuse to send', () => {
  const fake = useFaultServer();

  // A tester's fake service: each was saved ("Saved key …", exit 0, the profile made the default), then "not logged in".
  it.each([
    ['empty', '', 'is empty'],
    [
      'with a space',
      'fcs_abcdefgh_secret secret',
      'contains whitespace, control or non-ASCII characters; refusing to send it',
    ],
    [
      'with an ESC',
      'fcs_abcdefgh_secret\x1b[2J',
      'contains whitespace, control or non-ASCII characters; refusing to send it',
    ],
    // A ring's: these were saved as answered, though sent trimmed.
    ['with a newline at its end', 'fcs_abcdefgh_secret\n', 'has white space at its ends'],
    ['with a space before it', ' fcs_abcdefgh_secret', 'has white space at its ends'],
  ])('%s: shown as answered (escaped), not saved, exit 1, config unchanged', async (_name, key, why) => {
    fake.handle((_req, res) => json(res, 201, { ...currentKeyBody(), key }));
    for (const stdoutIsTTY of [false, true]) {
      const { code, stdout, stderr, tc } = await cli(
        ['keys', 'create', '--save', '--profile', 'std', ...(stdoutIsTTY ? [] : ['--json'])],
        {
          env: { FACECTL_API_KEY: `fcs_AAAAAAAA_${'B'.repeat(32)}`, FACECTL_BASE_URL: fake.baseUrl },
          stdoutIsTTY,
          stderrIsTTY: false,
        },
      );
      expect(code, stderr).toBe(1);
      // The answer as printed: JSON under --json, escaped on a terminal (the ESC never reaches it).
      if (!stdoutIsTTY) expect(JSON.parse(stdout)).toMatchObject({ key });
      else expect(stdout).toContain(key.replace('\x1b', '\\x1b'));
      expect(stdout).not.toContain('\x1b[2J');
      const message = `the key was created (shown above) but not saved: the API key from the service's answer ${why}`;
      const hint = 'the configuration is unchanged; run with --debug to see the exchange';
      if (stdoutIsTTY) expect(stderr).toContain(`error: ${message}\n${hint}\n`);
      else
        expect(JSON.parse(stderr.trimEnd().split('\n').at(-1) as string)).toMatchObject({ error: { message, hint } });
      expect(stderr).not.toContain('Saved key');
      expect(tc.config.data).toEqual({});
    }
  });
});

import { describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/command-harness.js';
import { useService } from '../helpers/service-suite.js';
import { argv, expectRefused, runInProcess } from '../helpers/unit-harness.js';

/** A flag's value that is itself a flag, and a profile that does not exist: refused, naming the flag. */

const service = useService({}, { faces: ['ada-lovelace'] });

describe('a global flag followed by another flag instead of its value', () => {
  it('--profile --json: "--profile needs a value", exit 2, one JSON error, nothing sent', async () => {
    const result = await expectRefused(
      service,
      argv`faces get ada-lovelace --profile --json`,
      '--profile needs a value',
    );
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'usage',
        message: '--profile needs a value',
        hint: '--json is a flag, not the value of --profile; to give a value spelled like a flag, write --profile=--json',
      },
    });
  });

  it('--base-url --debug: refused the same way, in plain text', async () => {
    const result = await expectRefused(service, argv`--base-url --debug faces get ada-lovelace`, [
      'error: --base-url needs a value',
      'write --base-url=--debug',
    ]);
    expect(result.stdout).toBe('');
  });
});

describe('a profile that does not exist', () => {
  const config = { profiles: { work: { base_url: 'http://work.test' } } };

  it('--profile nosuch for a command that needs a key: exit 2 naming it and the profiles there are', async () => {
    const result = await expectRefused(
      service,
      argv`faces get ada-lovelace --profile nosuch`,
      [
        'error: no profile named "nosuch" (--profile) in /test/facectl/config.json',
        'known profiles: default, work; create one with `facectl auth login --profile nosuch`',
      ],
      { config },
    );
    expect(result.stdout).toBe('');
  });

  it('FACECTL_PROFILE=nosuch: the error names the variable', async () => {
    const result = await expectRefused(service, argv`faces get ada-lovelace --json`, [], {
      env: { FACECTL_PROFILE: 'nosuch' },
      config,
    });
    expect(JSON.parse(result.stderr).error).toEqual({
      code: 'unknown_profile',
      message: 'no profile named "nosuch" (FACECTL_PROFILE=nosuch) in /test/facectl/config.json',
      hint: 'known profiles: default, work; create one with `facectl auth login --profile nosuch`',
    });
  });

  it.each([
    [argv`config get base_url --profile nosuch`],
    [argv`auth status --profile nosuch`],
    [argv`auth logout --profile nosuch`],
    [argv`auth token --profile nosuch`],
  ])('%j reads the profile: refused, exit 2, the file unchanged', async (...[args]) => {
    const { code, stdout, stderr, tc } = await runInProcess(args, { config });
    expect(code, stderr).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('no profile named "nosuch" (--profile)');
    expect(stderr).toContain('known profiles: work');
    expect(tc.config.data).toEqual(config);
  });

  it('a profile name no --profile can give (a newline in it, written by hand) is not listed among the known', async () => {
    const odd = {
      profiles: { work: { base_url: 'http://work.test' }, 'evil\nerror: x': { base_url: 'http://x.test' } },
    };
    const { code, stderr } = await runInProcess(argv`config get base_url --profile nosuch`, { config: odd });
    expect(code, stderr).toBe(2);
    expect(stderr).toContain('known profiles: work; create one with');
    expect(stderr).not.toContain('evil');
  });

  it('a key from FACECTL_API_KEY and FACECTL_BASE_URL: the profile is not read, the command runs', async () => {
    const result = await runCommand(service, argv`faces get ada-lovelace --profile nosuch --json`, {
      env: { FACECTL_API_KEY: service.key('pro'), FACECTL_BASE_URL: service.baseUrl },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ alias: 'ada-lovelace' });
  });

  it('config set creates the profile it names', async () => {
    const { code, stderr, tc } = await runInProcess(argv`config set base_url http://new.test --profile fresh`, {
      config,
    });
    expect(code, stderr).toBe(0);
    expect(tc.config.data.profiles).toEqual({ ...config.profiles, fresh: { base_url: 'http://new.test' } });
  });

  it('the default profile may be named before it holds anything', async () => {
    const { code, stdout, stderr } = await runInProcess(argv`config get default_profile --profile default --json`);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(stdout)).toEqual({ key: 'default_profile', value: 'default', profile: null });
  });
});

describe("a verb's value flag followed by a flag instead of its value", () => {
  it('docs submit --label --content hi: "--label needs a value", exit 2, nothing sent', async () => {
    const result = await expectRefused(service, argv`docs submit --alias ada-lovelace --label --content hi`, []);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'error: --label needs a value\n' +
        '--content is a flag, not the value of --label; to give a value spelled like a flag, write --label=--content\n',
    );
  });

  it.each([
    // A global flag after it is read as the global flag it is (commander reads those anywhere on the
    // line); the hint names it, the word typed after the flag (it named the flag after it).
    [argv`docs submit --alias ada-lovelace --label --json --content hi`, '--label', '--json'],
    [argv`docs submit --alias ada-lovelace --label --debug --content hi`, '--label', '--debug'],
    // A ring's find: the word after the global flag became the label, and "no document given" was said.
    [argv`docs submit --alias ada-lovelace --content hi --label --json -`, '--label', '--json'],
    [argv`docs submit --alias ada-lovelace --content hi --label --debug x`, '--label', '--debug'],
    [argv`keys create --name --save`, '--name', '--save'],
    [argv`keys create --scopes --help`, '--scopes', '--help'],
    [argv`threads create --alias --label x`, '--alias', '--label'],
    [argv`--profile default docs sync doc_1 --timeout --wait`, '--timeout', '--wait'],
  ])('%j: refused naming %s, nothing sent, nothing stored', async (args, flag, next) => {
    const result = await expectRefused(service, [...args, '--json'], []);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr).error).toMatchObject({ code: 'usage', message: `${flag} needs a value` });
    expect(JSON.parse(result.stderr).error.hint).toContain(`write ${flag}=${next}`);
    expect(result.tc.config.data.profiles?.default).toEqual({ api_key: service.key('pro'), base_url: service.baseUrl });
  });

  it('docs submit --content hi --label (the last word): "--label needs a value", exit 2, nothing sent', async () => {
    const result = await expectRefused(service, argv`docs submit --alias ada-lovelace --content hi --label`, []);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'error: --label needs a value\n' +
        '--label ends the line, with nothing after it for its value; write --label LABEL\n',
    );

    const json = await expectRefused(service, argv`docs submit --json --alias ada-lovelace --content hi --label`, []);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toEqual({
      error: {
        code: 'usage',
        message: '--label needs a value',
        hint: '--label ends the line, with nothing after it for its value; write --label LABEL',
      },
    });
  });

  it('docs submit --label --json (a global flag after it): not "ends the line": its value looks like a flag, write --label=--json', async () => {
    for (const tail of [[], ['--base-url', service.baseUrl]]) {
      const args = [...argv`docs submit --alias ada-lovelace --content hi --label --json`, ...tail];
      const result = await expectRefused(service, args, []);
      expect(result.stdout).toBe('');
      expect(JSON.parse(result.stderr)).toEqual({
        error: {
          code: 'usage',
          message: '--label needs a value',
          hint: '--json is a flag, not the value of --label; to give a value spelled like a flag, write --label=--json',
        },
      });
    }
  });

  it.each([
    [argv`auth status --profile`, '--profile', '--profile NAME'],
    [argv`faces get ada-lovelace --base-url`, '--base-url', '--base-url URL'],
    [argv`faces get ada-lovelace --jq`, '--jq', '--jq EXPRESSION'],
    [argv`api /v1/auth/api-keys/current -X`, '-X', '--method METHOD'],
    [argv`--profile default docs sync doc_1 --timeout`, '--timeout', '--timeout SECONDS'],
  ])('%j, a value flag ending the line: refused naming %s, exit 2, nothing sent', async (args, flag, write) => {
    const result = await expectRefused(service, args, []);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: ${flag} needs a value\n${flag} ends the line, with nothing after it for its value; write ${write}\n`,
    );
    const json = await expectRefused(service, ['--json', ...args], []);
    expect(JSON.parse(json.stderr).error).toEqual({
      code: 'usage',
      message: `${flag} needs a value`,
      hint: `${flag} ends the line, with nothing after it for its value; write ${write}`,
    });
  });

  it('a short flag (api -X --include) names itself and gives the long form to write', async () => {
    const result = await expectRefused(service, argv`api -X --include /v1/auth/api-keys/current`, '-X needs a value');
    expect(result.stderr).toContain('write --method=--include');
  });

  it('--label=--content is a value: the document is stored with that label', async () => {
    const result = await runCommand(
      service,
      argv`docs submit --alias ada-lovelace --label=--content --content hi --json`,
    );
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as { document_id: string };
    expect(service.store.get('documents', printed.document_id)).toMatchObject({ label: '--content', content: 'hi' });
  });

  it('a value that starts with a dash but is no flag of the verb is still a value (checked by its own rule)', async () => {
    const result = await expectRefused(service, argv`keys create --budget-usd -1`, '--budget-usd:');
    expect(result.stderr).not.toContain('needs a value');
  });
});

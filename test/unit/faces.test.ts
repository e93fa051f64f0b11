import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCreateFace } from '../../src/commands/faces/create.js';
import getFace from '../../src/commands/faces/get.js';
import { contextFor, requestCount, runCommand } from '../helpers/command-harness.js';
import { call, createFace, expectContract } from '../helpers/service.js';
import { useService, useTempFiles } from '../helpers/service-suite.js';
import { argv, callVerb, expectRefused } from '../helpers/unit-harness.js';

// A service of its own for each test: no test depends on a face another one created.
const service = useService({}, { each: true });
const { file } = useTempFiles('facectl-faces-');

const storedFace = async (alias: string, plan: 'pro' | 'free' = 'pro') =>
  expectContract(
    'getFace',
    await call(service, 'getFace', { key: service.key(plan), params: { face_id: alias } }),
    200,
  );

describe('faces create', () => {
  it('run() creates the face with every field; piped output is tab-separated', async () => {
    const everyField = {
      name: 'Ada Lovelace',
      alias: 'ada-lovelace',
      basicFacts: { born: 1815, city: 'London' },
      defaultTools: ['search', 'calc'],
      defaultModel: 'gpt-x',
      formula: 'a+b',
    };
    const [face, tc] = await callVerb(service, (ctx) => runCreateFace(ctx, everyField));
    expect(tc.stdout()).toContain('alias\tada-lovelace\n');
    expect(tc.stdout()).toContain('default_tools\tsearch,calc\n');
    expect(tc.stdout()).toContain(`uid\t${face.uid}\n`);
    expect(tc.stderr()).toBe('');
    expect(await storedFace('ada-lovelace')).toMatchObject({
      name: 'Ada Lovelace',
      basic_facts: { born: 1815, city: 'London' },
      default_tools: ['search', 'calc'],
      default_model: 'gpt-x',
      formula: 'a+b',
      component_counts: { alpha: 0, beta: 0, delta: 0, epsilon: 0 },
    });
  });

  it('script form: --json --no-input with --basic-facts from a file prints the service object', async () => {
    const facts = file('facts.json', '{"field": "mathematics"}');
    const result = await runCommand(
      service,
      argv`faces create --name Grace --alias grace-hopper --basic-facts ${`@${facts}`} --json --no-input`,
    );
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed).toEqual(await storedFace('grace-hopper'));
    expect(printed.basic_facts).toEqual({ field: 'mathematics' });
  });

  it('--basic-facts 5,000 levels deep (JSON.parse takes it, JSON.stringify runs out of stack): exit 2, nothing sent', async () => {
    const facts = file('deep.json', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`);
    const result = await expectRefused(
      service,
      argv`faces create --name D --alias deep-face --basic-facts ${`@${facts}`}`,
      ['error: POST /v1/faces: the request body is nested too deeply to be written as JSON\n'],
    );
    expect(result.stderr).not.toContain('unexpected failure');
    // Arrays 3,000 deep run the stack out earlier, in the request's check (a breaker: exit 1, "internal_error").
    const arrays = file('deep-arrays.json', `{"k":${'['.repeat(3000)}${']'.repeat(3000)}}`);
    const checked = await expectRefused(
      service,
      argv`faces create --name D --alias deep-face --basic-facts ${`@${arrays}`}`,
      ['error: POST /v1/faces: the request body is nested too deeply to be checked\n'],
    );
    expect(checked.stderr).not.toContain('unexpected failure');
  });

  it('pipe form: --basic-facts - reads the JSON object from standard input', async () => {
    const result = await runCommand(
      service,
      ['faces', 'create', '--name', 'Alan', '--alias', 'alan-turing', '--basic-facts', '-', '--json'],
      { stdin: '{"born": 1912}\n' },
    );
    expect(result.code, result.stderr).toBe(0);
    expect((await storedFace('alan-turing')).basic_facts).toEqual({ born: 1912 });
  });

  it('terminal form: missing --name and --alias are asked for, and the answers are used', async () => {
    const terminal = { stdinIsTTY: true, stdoutIsTTY: true, answers: ['Emmy Noether', 'emmy-noether'] };
    const { code, tc } = await runCommand(service, ['faces', 'create', '--default-model', 'gpt-x'], terminal);
    expect(code, tc.stderr()).toBe(0);
    tc.assertNoLeftoverAnswers();
    expect(tc.prompts.map((p) => p.message)).toEqual([
      'Display name of the face',
      'Alias (a slug such as ada-lovelace)',
    ]);
    expect(stripVTControlCharacters(tc.stdout())).toMatch(/^alias +emmy-noether$/m);
    expect(tc.stderr()).toContain('Created face emmy-noether');
    expect(await storedFace('emmy-noether')).toMatchObject({ name: 'Emmy Noether', default_model: 'gpt-x' });
  });

  it('terminal form: an alias typed at the prompt that the service refuses is asked for again, with the reason', async () => {
    await createFace(service, service.key('pro'), 'ada-lovelace');
    const terminal = {
      stdinIsTTY: true,
      stdoutIsTTY: true,
      answers: ['Ada Lovelace', 'Ada Lovelace', 'ada-lovelace', 'ada-byron'],
    };
    const before = requestCount(service);
    const { code, tc } = await runCommand(service, ['faces', 'create'], terminal);
    expect(code, tc.stderr()).toBe(0);
    tc.assertNoLeftoverAnswers();
    expect(tc.prompts.map((p) => p.message)).toEqual([
      'Display name of the face',
      'Alias (a slug such as ada-lovelace)',
      'Alias (a slug such as ada-lovelace)',
      'Alias (a slug such as ada-lovelace)',
    ]);
    // On a terminal of 100 columns, the long message wraps at a word.
    expect(stripVTControlCharacters(tc.stderr()).split('\n')).toEqual([
      'The service refused that alias: must be a slug: lower-case letters, digits and single hyphens, 3 to',
      '64 characters (e.g. ada-lovelace)',
      'The service refused that alias: a face with alias ada-lovelace already exists',
      expect.stringMatching(/^✓ Created face ada-byron \(face_\w+\)$/),
      '',
    ]);
    expect(stripVTControlCharacters(tc.stdout())).toMatch(/^alias +ada-byron$/m);
    // Three sends: two refused (nothing stored), the third created the face.
    expect(requestCount(service)).toBe(before + 3);
    expect(await storedFace('ada-byron')).toMatchObject({ name: 'Ada Lovelace', alias: 'ada-byron' });
    expect([...service.store.values('faces')].map((f) => f.alias).sort()).toEqual(['ada-byron', 'ada-lovelace']);
  });

  it('on a terminal, an alias given as --alias that the service refuses is not asked for again: exit 2', async () => {
    const result = await runCommand(service, ['faces', 'create', '--name', 'N', '--alias', 'Ada'], {
      stdinIsTTY: true,
      stdoutIsTTY: true,
    });
    expect(result.code).toBe(2);
    expect(result.tc.prompts).toEqual([]);
    expect(result.stderr).toContain('status: 422 validation_error');
    expect([...service.store.values('faces')]).toEqual([]);
  });

  it('without a terminal a missing --alias is exit 2 naming the flag, nothing sent', async () => {
    await expectRefused(
      service,
      argv`faces create --name X`,
      'error: --alias is required when not running interactively (standard input is not a terminal)',
    );
  });

  it('without a terminal, every missing required flag is named in one error (exit 2, nothing sent)', async () => {
    const result = await expectRefused(service, argv`faces create --no-input`, [
      'error: --name and --alias are required when not running interactively (--no-input)\npass --name VALUE --alias VALUE\n',
    ]);
    expect(result.stderr).toBe(
      'error: --name and --alias are required when not running interactively (--no-input)\npass --name VALUE --alias VALUE\n',
    );
    const json = await expectRefused(service, argv`faces create --no-input --json`, ['"code":"usage"']);
    expect(JSON.parse(json.stderr).error.message).toBe(
      '--name and --alias are required when not running interactively (--no-input)',
    );
  });

  it('the missing-flag error says why nothing was asked: a pipe on standard input, stdout or stderr not a terminal, CI', async () => {
    const reason = async (options: {
      stdinIsTTY?: boolean;
      stdoutIsTTY?: boolean;
      stderrIsTTY?: boolean;
      env?: Record<string, string>;
    }) => (await runCommand(service, ['faces', 'create', '--name', 'X'], options)).stderr;
    expect(await reason({ stdinIsTTY: false, stdoutIsTTY: true })).toContain(
      '--alias is required when not running interactively (standard input is not a terminal)',
    );
    expect(await reason({ stdinIsTTY: true, stdoutIsTTY: false })).toContain('(standard output is not a terminal)');
    // `2>log` on a terminal: the question would be drawn where nobody sees it (a breaker's wait without end).
    expect(await reason({ stdinIsTTY: true, stdoutIsTTY: true, stderrIsTTY: false })).toContain(
      '(standard error, where questions are asked, is not a terminal)',
    );
    expect(await reason({ stdinIsTTY: true, stdoutIsTTY: true, env: { CI: 'true' } })).toContain('(CI is set)');
  });

  it('--no-input on a terminal still never prompts', async () => {
    const result = await runCommand(service, ['faces', 'create', '--alias', 'abc-def', '--no-input'], {
      stdinIsTTY: true,
      stdoutIsTTY: true,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--name is required when not running interactively (--no-input)');
    expect(result.tc.prompts).toEqual([]);
  });

  it.each(['Ada', 'ada lovelace', 'adé', 'ab', 'X', 'a'.repeat(65), 'ada--lovelace', '-ada'])(
    "alias %j breaks only the local service's slug rule: sent, refused by it with 422 naming the field and the rule (case 5)",
    async (alias) => {
      const before = requestCount(service);
      const result = await runCommand(service, ['faces', 'create', '--name', 'N', '--alias', alias]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('status: 422 validation_error');
      // Once, though two of the service's checks may fail alike ('X': too short and not lower-case).
      expect(
        result.stderr.split(
          '- alias: must be a slug: lower-case letters, digits and single hyphens, 3 to 64 characters',
        ),
      ).toHaveLength(2);
      expect(requestCount(service)).toBe(before + 1);
      expect(service.store.maps.faces.size).toBe(0);
    },
  );

  it('under --json a service 422 lists its field errors as `fields`, as a refusal before sending does, each once', async () => {
    const result = await runCommand(service, ['faces', 'create', '--name', 'N', '--alias', 'X', '--json']);
    expect(result.code, result.stderr).toBe(2);
    const { error } = JSON.parse(result.stderr) as { error: { status: number; fields: unknown } };
    expect(error.status).toBe(422);
    expect(error.fields).toEqual([
      {
        field: 'alias',
        message:
          'must be a slug: lower-case letters, digits and single hyphens, 3 to 64 characters (e.g. ada-lovelace)',
      },
    ]);
  });

  it('an empty alias is refused before sending (exit 2), nothing sent', async () => {
    await expectRefused(
      service,
      ['faces', 'create', '--name', 'N', '--alias', ' '],
      '--alias: an alias must not be empty',
    );
  });

  it('--basic-facts @/dev/zero (a device, endless): too large, exit 2, nothing sent, no advice to split into documents', async () => {
    const result = await expectRefused(
      service,
      argv`faces create --name Z --alias zero-face --basic-facts @/dev/zero`,
      [],
    );
    expect(result.stderr).toBe("error: /dev/zero is larger than 64 MiB, the service's request size limit\n");
  });

  it('bad --basic-facts JSON is exit 2 naming the flag and column; nothing sent', async () => {
    await expectRefused(
      service,
      ['faces', 'create', '--name', 'N', '--alias', 'abc', '--basic-facts', '{"a": 1,}'],
      'error: --basic-facts: line 1, column 9: invalid JSON',
    );
  });

  it('a duplicate alias is exit 5 (409) with the fix', async () => {
    await createFace(service, service.key('pro'), 'ada-lovelace');
    const result = await runCommand(service, ['faces', 'create', '--name', 'Again', '--alias', 'ada-lovelace']);
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(/409/);
  });
});

describe('faces get', () => {
  it('reads a face by alias and by uid', async () => {
    await createFace(service, service.key('pro'), 'ada-lovelace');
    const stored = await storedFace('ada-lovelace');
    const tc = contextFor(service, { globals: { json: true } });
    const byUid = await getFace.run(tc.ctx, {}, stored.uid);
    await tc.close();
    expect(byUid).toEqual(stored);
    expect(JSON.parse(tc.stdout())).toEqual(stored);
    const byAlias = await runCommand(service, ['faces', 'get', 'ada-lovelace']);
    expect(byAlias.code).toBe(0);
    expect(byAlias.stdout).toContain(`uid\t${stored.uid}\n`);
  });

  it('an unknown face is exit 4; another user does not see it', async () => {
    await createFace(service, service.key('pro'), 'ada-lovelace');
    expect((await runCommand(service, ['faces', 'get', 'nobody-here'])).code).toBe(4);
    expect((await runCommand(service, ['faces', 'get', 'ada-lovelace'], { plan: 'free' })).code).toBe(4);
  });

  it('its help says it uses an endpoint the published interface does not show', async () => {
    const result = await runCommand(service, ['faces', 'get', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('endpoint the published interface does not show');
    expect(result.stdout).toContain('Examples:');
  });
});

import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { checkFlags } from '../../src/commands/flag-check.js';
import { requestBody, requireValue, splitList, verb } from '../../src/commands/kit.js';
import { declare } from '../../src/commands/declare.js';
import { ApiError, type CliError, ExitCode, UsageError } from '../../src/errors.js';
import { colorEnabled } from '../../src/io/terminal.js';
import { reportError, run } from '../../src/main.js';
import { createTestContext } from '../helpers/test-context.js';
import { failure } from '../helpers/unit-harness.js';

describe('kit.requireValue', () => {
  const terminal = { stdinIsTTY: true, stdoutIsTTY: true };

  it('returns a given value without asking', async () => {
    const tc = createTestContext(terminal);
    expect(await requireValue(tc.ctx, { flag: '--alias', value: 'ada', message: 'Alias?' })).toBe('ada');
    expect(tc.prompts).toEqual([]);
  });

  it('asks on a terminal', async () => {
    const tc = createTestContext({ ...terminal, answers: ['ada-lovelace'] });
    expect(await requireValue(tc.ctx, { flag: '--alias', value: undefined, message: 'Alias?' })).toBe('ada-lovelace');
    expect(tc.prompts).toEqual([{ kind: 'input', message: 'Alias?' }]);
    tc.assertNoLeftoverAnswers();
  });

  it.each([
    ['piped', { stdinIsTTY: false, stdoutIsTTY: true }, 'standard input is not a terminal'],
    ['--no-input', { ...terminal, globals: { noInput: true } }, '--no-input'],
    ['CI', { ...terminal, env: { CI: 'true' } }, 'CI is set'],
  ])('without a usable terminal (%s) is a usage error naming the flag and why', async (_name, options, why) => {
    const tc = createTestContext(options);
    const error = await failure(requireValue(tc.ctx, { flag: '--alias', value: undefined, message: 'Alias?' }));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe(`--alias is required when not running interactively (${why})`);
    expect(tc.prompts).toEqual([]);
  });

  it('validates a given value against the rule', async () => {
    const tc = createTestContext();
    const check = (v: string) => (/^[a-z-]+$/.test(v) ? undefined : 'must be a slug');
    const error = await failure(requireValue(tc.ctx, { flag: '--alias', value: 'Ada', message: 'Alias?', check }));
    expect(error.message).toBe('--alias: must be a slug');
  });

  it('the scripted prompter fails on answers left over', () => {
    const tc = createTestContext({ answers: ['unused'] });
    expect(() => tc.assertNoLeftoverAnswers()).toThrow(/never asked for/);
  });
});

describe('the check made from a declaration (flag-check.ts), and splitList', () => {
  const flags = {
    expiresInDays: { value: '<days>', type: 'int', min: 1, max: 365, unit: 'days', help: 'lifetime' },
    name: { value: '<name>', help: 'a label' },
    save: { help: 'keep it' },
  } as const;

  it('names the flag of a bad value, and types the good ones', () => {
    expect(() => checkFlags(flags, { expiresInDays: '0' })).toThrow(
      '--expires-in-days: must be a whole number of days from 1 to 365',
    );
    expect(() => checkFlags(flags, { expiresInDays: '1.5' })).toThrow(UsageError);
    expect(checkFlags(flags, { expiresInDays: '30', name: 'ci' })).toEqual({
      expiresInDays: 30,
      name: 'ci',
      save: false,
    });
  });

  it('splits lists', () => {
    expect(splitList('a, b,,c ')).toEqual(['a', 'b', 'c']);
    expect(splitList(undefined)).toBeUndefined();
  });
});

describe('kit.requestBody', () => {
  it('names each field as the service does and sends only the options the user gave', () => {
    const body = requestBody({
      name: 'ci',
      expiresInDays: 30,
      allowedLlmModels: ['gpt-x'],
      budgetUsd: undefined,
      scopes: undefined,
    });
    expect(body).toEqual({ name: 'ci', expires_in_days: 30, allowed_llm_models: ['gpt-x'] });
    expect(Object.keys(body)).not.toContain('budget_usd');
  });

  it('keeps values that are given but falsy, and adds nothing of its own', () => {
    expect(requestBody({ budgetUsd: 0, label: '', save: false, tools: [] })).toEqual({
      budget_usd: 0,
      label: '',
      save: false,
      tools: [],
    });
    expect(requestBody({})).toEqual({});
  });
});

describe('global flags, read by commander wherever they stand', () => {
  it.each([
    [['--json', '--profile', 'work', 'config', 'get', 'base_url']],
    [['config', 'get', 'base_url', '--json', '--profile', 'work']],
    [['config', '--json', 'get', '--profile=work', 'base_url']],
  ])('hold wherever they are written: %j', async (argv) => {
    const tc = createTestContext({ config: { profiles: { work: { base_url: 'http://work.test' } } } });
    expect(await run(argv, tc.ctx), tc.stderr()).toBe(0);
    expect(JSON.parse(tc.stdout())).toEqual({ key: 'base_url', value: 'http://work.test', profile: 'work' });
  });

  it('--jq implies --json, --no-input and the switches are read, a value written --flag=value may look like a flag, -- ends them', async () => {
    const every = createTestContext({ config: { profiles: { default: { base_url: 'http://h.test' } } } });
    const line = [
      '--jq',
      '.value',
      'config',
      '--no-input',
      'get',
      '--debug',
      'base_url',
      '--insecure-http',
      '--api-key-stdin',
    ];
    expect(await run(line, every.ctx), every.stderr()).toBe(0);
    expect(every.stdout()).toBe('http://h.test\n');
    expect(every.ctx.globals).toEqual({
      jq: '.value',
      json: true,
      noInput: true,
      debug: true,
      insecureHttp: true,
      apiKeyStdin: true,
    });
    const ended = createTestContext();
    await run(['--profile=--json', 'config', 'get', '--base-url', 'http://h', '--', '--debug'], ended.ctx);
    expect(ended.ctx.globals).toMatchObject({ profile: '--json', baseUrl: 'http://h', debug: false, json: false });
  });

  it('a value flag ending the line is a usage error naming it, rendered by the flags before it', async () => {
    const tc = createTestContext();
    expect(await run(['--json', 'faces', '--profile'], tc.ctx)).toBe(ExitCode.usage);
    expect(JSON.parse(tc.stderr()).error).toEqual({
      code: 'usage',
      message: '--profile needs a value',
      hint: '--profile ends the line, with nothing after it for its value; write --profile NAME',
    });
    expect(tc.stdout()).toBe('');
  });
});

describe('a verb declared once (verb.ts)', () => {
  function program(ctx: ReturnType<typeof createTestContext>['ctx'], seen: unknown[]) {
    const root = new Command('facectl').exitOverride();
    const thing = verb({
      description: 'Do a thing.',
      args: [['<id>', 'the thing']],
      flags: {
        name: { value: '<name>', help: 'its name' },
        count: { value: '<n>', type: 'int', min: 1, max: 9, unit: 'things', default: '2', help: 'how many' },
      },
      examples: ['facectl thing 1 --name x'],
      run: async (_ctx, flags, id) => void seen.push({ flags, id }),
    });
    declare(root, 'thing', thing, ctx).exitOverride();
    return root;
  }

  it('hands run its checked flags (defaults applied) and arguments', async () => {
    const tc = createTestContext();
    const seen: unknown[] = [];
    await program(tc.ctx, seen).parseAsync(['thing', 'id1', '--name', 'n'], { from: 'user' });
    expect(seen).toEqual([{ flags: { name: 'n', count: 2 }, id: 'id1' }]);
  });

  it('help shows the flags and ends with the examples', () => {
    const tc = createTestContext();
    let help = '';
    const thing = program(tc.ctx, []).commands[0];
    thing?.configureOutput({ writeOut: (text) => (help += text) });
    expect(() => thing?.outputHelp()).not.toThrow();
    expect(help).toContain('--count <n>');
    expect(help).toContain('(default: 2)');
    expect(help).toMatch(/Examples:\n {2}\$ facectl thing 1 --name x\n$/);
  });
});

describe('terminal rules', () => {
  it('colour: NO_COLOR > FORCE_COLOR > TERM=dumb / CI > TTY', () => {
    expect(colorEnabled({}, true)).toBe(true);
    expect(colorEnabled({}, false)).toBe(false);
    expect(colorEnabled({ NO_COLOR: '1', FORCE_COLOR: '1' }, true)).toBe(false);
    expect(colorEnabled({ FORCE_COLOR: '1' }, false)).toBe(true);
    expect(colorEnabled({ FORCE_COLOR: '0' }, true)).toBe(false);
    expect(colorEnabled({ TERM: 'dumb' }, true)).toBe(false);
    expect(colorEnabled({ CI: 'true' }, true)).toBe(false);
  });

  it('canPrompt only with stdin and stdout on a terminal, no --no-input, no CI', () => {
    expect(createTestContext({ stdinIsTTY: true, stdoutIsTTY: true }).ctx.io.canPrompt()).toBe(true);
    expect(createTestContext({ stdinIsTTY: true, stdoutIsTTY: false }).ctx.io.canPrompt()).toBe(false);
    expect(createTestContext({ stdinIsTTY: false, stdoutIsTTY: true }).ctx.io.canPrompt()).toBe(false);
    expect(createTestContext({ stdinIsTTY: true, stdoutIsTTY: true, env: { CI: '1' } }).ctx.io.canPrompt()).toBe(false);
  });
});

describe('output', () => {
  const rows = [
    { id: 'a', tags: ['x', 'y'], note: 'tab\there' },
    { id: 'b', tags: [], note: null },
  ];
  const columns = [
    { header: 'id', value: (r: (typeof rows)[number]) => r.id },
    { header: 'tags', value: (r: (typeof rows)[number]) => r.tags },
    { header: 'note', value: (r: (typeof rows)[number]) => r.note },
  ];

  it('--json prints exactly one JSON document: one line when piped, indented on a terminal', () => {
    const tc = createTestContext({ globals: { json: true } });
    tc.ctx.out.list(rows, columns);
    expect(JSON.parse(tc.stdout())).toEqual(rows);
    expect(tc.stdout()).toBe(`${JSON.stringify(rows)}\n`);
    const terminal = createTestContext({ globals: { json: true }, stdoutIsTTY: true });
    terminal.ctx.out.record(rows[0] as object);
    expect(terminal.stdout()).toBe(`${JSON.stringify(rows[0], null, 2)}\n`);
  });

  it('piped: tab-separated rows, no header, one line per row', () => {
    const tc = createTestContext();
    tc.ctx.out.list(rows, columns);
    tc.ctx.out.record({ key: 'v', list: [1, 2] });
    expect(tc.stdout()).toBe('a\tx,y\ttab here\nb\t\t\nkey\tv\nlist\t1,2\n');
  });

  it('terminal: a table with headers', async () => {
    const tc = createTestContext({ stdoutIsTTY: true, env: { NO_COLOR: '1' } });
    await tc.ctx.out.prepare?.();
    tc.ctx.out.list(rows, columns);
    const lines = tc.stdout().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TAGS\s+NOTE$/);
    // A tab in a cell is a space: a terminal expands it past the column (a ring saw a label widen its line).
    expect(lines[1]).toMatch(/^a\s+x, y\s+tab here$/);
    expect(lines).toHaveLength(3);
  });

  it('success only on a terminal; warnings always, on stderr', () => {
    const piped = createTestContext();
    piped.ctx.out.success('Created');
    piped.ctx.out.warn('careful');
    expect(piped.stderr()).toBe('warning: careful\n');
    expect(piped.stdout()).toBe('');
    const tty = createTestContext({ stdoutIsTTY: true, env: { NO_COLOR: '1' } });
    tty.ctx.out.success('Created');
    expect(tty.stderr()).toBe('✓ Created\n');
  });

  it('spinner and progress: silent under --json, sparse lines when piped, drawn on a terminal', () => {
    const json = createTestContext({ globals: { json: true } });
    json.ctx.out.spinner('Working').stop();
    const bar = json.ctx.out.progress('Submitting');
    bar.update(1, 4);
    bar.stop();
    expect(json.stderr()).toBe('');

    const piped = createTestContext();
    const sparse = piped.ctx.out.progress('Submitting');
    for (let i = 0; i <= 8; i++) sparse.update(i, 8);
    expect(piped.stderr().trimEnd().split('\n')).toEqual([
      'Submitting: 0/8',
      'Submitting: 2/8',
      'Submitting: 4/8',
      'Submitting: 6/8',
      'Submitting: 8/8',
    ]);

    const tty = createTestContext({ stdoutIsTTY: true, env: { NO_COLOR: '1' } });
    const drawn = tty.ctx.out.progress('Preparing');
    drawn.update(1, 2, 'processing');
    drawn.stop();
    expect(tty.stderr()).toContain('Preparing ████████████░░░░░░░░░░░░ 1/2 processing');

    // A narrow terminal (a ring's find: one new line per redraw at 40 columns): the bar shrinks, then the text is cut.
    for (const [columns, line] of [
      [40, 'Preparing ███████░░░░░ 11/18 processing'],
      [30, 'Preparing █░ 11/18 processing'],
      [20, 'Preparing 11/18 pro'],
    ] as const) {
      const narrow = createTestContext({ stdoutIsTTY: true, env: { NO_COLOR: '1' } });
      (narrow.ctx.io.stderr as { columns?: number }).columns = columns;
      const bar = narrow.ctx.out.progress('Preparing');
      bar.update(11, 18, 'processing');
      bar.stop();
      const drawn = narrow
        .stderr()
        .replace(/^\r\x1b\[2K/, '')
        .trimEnd();
      expect(drawn).toBe(line);
      expect(drawn.length).toBeLessThan(columns);
    }
  });
});

describe('main: exit codes and error rendering', () => {
  it('an unknown flag is a usage error with the usage line, exit 2', async () => {
    const tc = createTestContext();
    expect(await run(['config', 'list', '--bogus'], tc.ctx)).toBe(ExitCode.usage);
    expect(tc.stderr()).toContain("error: unknown option '--bogus'");
    expect(tc.stderr()).toContain('usage: facectl config list [flags]');
    expect(tc.stdout()).toBe('');
  });

  it('a missing argument is a usage error, exit 2, with a JSON line under --json', async () => {
    const tc = createTestContext();
    expect(await run(['api', 'GET', '--json'], tc.ctx)).toBe(ExitCode.usage);
    expect(JSON.parse(tc.stderr())).toEqual({ error: { code: 'usage', message: "missing required argument 'path'" } });
  });

  it('--version and --help exit 0 on stdout', async () => {
    const version = createTestContext();
    expect(await run(['--version'], version.ctx)).toBe(0);
    expect(version.stdout()).toBe('0.1.0\n');
    const help = createTestContext();
    expect(await run(['auth', 'login', '--help'], help.ctx)).toBe(0);
    expect(help.stdout()).toContain('Examples:\n  $ facectl auth login');
  });

  it('renders an API error: what failed, status and code, each field error, the fix last', () => {
    const tc = createTestContext();
    const json = createTestContext({ globals: { json: true } });
    const detail = [
      { loc: ['body', 'alias'], msg: 'already used', type: 'value_error' },
      { loc: ['body', 'label'], msg: 'too long', type: 'value_error' },
    ];
    const error = new ApiError('the service refused the request as invalid (422 validation_error)', 422, {
      code: 'validation_error',
      detail,
      hint: 'fix the values listed above and run the command again',
    });
    reportError(tc.ctx, error);
    reportError(json.ctx, error);
    const lines = tc.stderr().trimEnd().split('\n');
    expect(lines.slice(0, 5)).toEqual([
      'error: the service refused the request as invalid (422 validation_error)',
      '  status: 422 validation_error',
      '  - alias: already used',
      '  - label: too long',
      'fix the values listed above and run the command again',
    ]);
    expect(lines).toHaveLength(5);
    expect(JSON.parse(json.stderr())).toEqual({
      error: {
        code: 'validation_error',
        message: 'the service refused the request as invalid (422 validation_error)',
        status: 422,
        detail,
        fields: [
          { field: 'alias', message: 'already used' },
          { field: 'label', message: 'too long' },
        ],
        hint: 'fix the values listed above and run the command again',
      },
    });
  });

  it('an unexpected failure: no stack trace unless --debug', () => {
    const plain = createTestContext();
    reportError(plain.ctx, new TypeError('boom'));
    expect(plain.stderr()).toContain('error: unexpected failure: boom');
    expect(plain.stderr()).not.toContain('at ');
    const debug = createTestContext({ globals: { debug: true } });
    reportError(debug.ctx, new TypeError('boom'));
    expect(debug.stderr()).toMatch(/\n\s+at /);
  });

  it('Ctrl-C during a wait is exit 130', async () => {
    const tc = createTestContext();
    const waiting = tc.ctx.clock.sleep(60_000, tc.ctx.signal);
    tc.interrupt();
    const error = (await failure(waiting)) as CliError;
    expect(error.exitCode).toBe(ExitCode.interrupted);
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestCount, runCommand } from '../helpers/command-harness.js';
import { createDocument, createFace, startTestService, type TestService } from '../helpers/service.js';
import { createTestContext } from '../helpers/test-context.js';
import { JQ_MAX_CHARACTERS, JQ_MAX_NESTING } from '../../src/io/jq.js';

// Issue 12: `--jq EXPR` on every command that has --json, with jq itself (jq-web), loaded only then.
let service: TestService;
beforeEach(async () => {
  service = await startTestService();
  await createFace(service, service.key('pro'), 'ada-lovelace', { name: 'Ada Lovelace' });
});
afterEach(async () => {
  await service.close();
});

describe('--jq', () => {
  it('filters a record; strings come out raw, as with gh', async () => {
    const result = await runCommand(service, ['faces', 'get', 'ada-lovelace', '--jq', '.name']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Ada Lovelace\n');
  });

  it('implies --json and takes any jq 1.7 program: objects, arrays, string interpolation', async () => {
    const object = await runCommand(service, ['faces', 'get', 'ada-lovelace', '--jq', '{alias, n: (.name | length)}']);
    expect(JSON.parse(object.stdout)).toEqual({ alias: 'ada-lovelace', n: 12 });
    const text = await runCommand(service, ['faces', 'get', 'ada-lovelace', '--jq', '"\\(.alias)=\\(.uid)"']);
    expect(text.stdout).toMatch(/^ada-lovelace=face_\S+\n$/);
    const none = await runCommand(service, ['faces', 'get', 'ada-lovelace', '--jq', 'empty']);
    expect({ code: none.code, stdout: none.stdout }).toEqual({ code: 0, stdout: '' });
  });

  it('filters a list and each NDJSON line of a batch (one compact result per line)', async () => {
    const keys = await runCommand(service, ['oauth', 'list', '--jq', '.[] | .provider'], { plan: 'connect' });
    expect(keys.stdout).toBe('example\n');
    const batch = ['a', 'b', 'c'].map((label) => JSON.stringify({ alias: 'ada-lovelace', label, content: label }));
    const submitted = await runCommand(service, ['docs', 'submit', '-', '--no-input', '--jq', '{line, ok}'], {
      stdin: `${batch.join('\n')}\n`,
    });
    expect(submitted.code, submitted.stderr).toBe(0);
    const lines = submitted.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.sort((x, y) => x.line - y.line)).toEqual([
      { line: 1, ok: true },
      { line: 2, ok: true },
      { line: 3, ok: true },
    ]);
  });

  it('result lines written one block at a time are filtered alike, whether a block holds one line or many', async () => {
    const tc = createTestContext({ globals: { json: true, jq: '{line}' } });
    await tc.ctx.out.prepare?.();
    tc.ctx.out.text('{"line":1,"ok":true}\n');
    tc.ctx.out.text('{"line":2,"ok":true}\n{"line":3,"ok":false}\n');
    tc.ctx.out.text(`${JSON.stringify({ line: 4 }, null, 2)}\n`);
    // Piped, a whole document comes out of jq on one line too; on a terminal it is indented.
    expect(tc.stdout()).toBe('{"line":1}\n{"line":2}\n{"line":3}\n{"line":4}\n');
    const terminal = createTestContext({ globals: { json: true, jq: '{line}' }, stdoutIsTTY: true });
    await terminal.ctx.out.prepare?.();
    terminal.ctx.out.text('{"line":1,"ok":true}\n');
    terminal.ctx.out.text(`${JSON.stringify({ line: 4 }, null, 2)}\n`);
    expect(terminal.stdout()).toBe('{"line":1}\n{\n  "line": 4\n}\n');
  });

  it('filters the answer of a text document streamed from standard input (its content read back for jq)', async () => {
    const content = 'Dear Babbage,\n'.repeat(5000);
    const submitted = await runCommand(
      service,
      [
        'docs',
        'submit',
        '--alias',
        'ada-lovelace',
        '--label',
        'letters',
        '-',
        '--no-input',
        '--jq',
        '[.label, (.content | length)]',
      ],
      { stdin: content },
    );
    expect(submitted.code, submitted.stderr).toBe(0);
    expect(JSON.parse(submitted.stdout)).toEqual(['letters', content.length]);
    const id = await runCommand(
      service,
      ['docs', 'submit', '--alias', 'ada-lovelace', '--label', 'plain', '-', '--no-input', '--jq', '.document_id'],
      { stdin: 'plain\n' },
    );
    expect(id.stdout).toMatch(/^doc_\S+\n$/);
  });

  it('the --resume command of a batch that stopped keeps --jq, so resuming prints the same shape', async () => {
    const lines = ['ada-lovelace', 'nobody-here', 'ada-lovelace'].map((alias, i) =>
      JSON.stringify({ alias, label: `l${i}`, content: 'x' }),
    );
    const stopped = await runCommand(
      service,
      ['docs', 'submit', '-', '--no-input', '--concurrency', '1', '--jq', '.ok'],
      {
        stdin: `${lines.join('\n')}\n`,
      },
    );
    expect(stopped.code).not.toBe(0);
    expect(stopped.stderr).toMatch(/facectl docs submit - --resume [^"]*--jq \.ok/);
  });

  it('an expression that does not compile is a usage error before anything is sent', async () => {
    const before = requestCount(service);
    const result = await runCommand(service, ['faces', 'create', '--name', 'X', '--alias', 'xx-x', '--jq', '.name |']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('invalid_jq');
    expect(error.message).toMatch(/^--jq: syntax error/);
    expect(requestCount(service)).toBe(before);
  });

  it("jq's own -r given as the expression: named as jq's option, with the --jq way, exit 2, nothing sent", async () => {
    const before = requestCount(service);
    const result = await runCommand(service, ['faces', 'create', '--name', 'X', '--alias', 'xx-x', '--jq', '-r']);
    expect(result.code).toBe(2);
    const { error } = JSON.parse(result.stderr);
    expect(error).toMatchObject({ code: 'invalid_jq', message: '--jq: -r is an option of jq, not an expression' });
    expect(error.hint).toContain('--jq already prints strings without quotes');
    // With an expression after it, too (a breaker's `--jq '-n 1'` was sent, then failed).
    const slurp = await runCommand(service, ['faces', 'create', '--name', 'X', '--alias', 'xx-x', '--jq', '--slurp .']);
    expect(slurp.code).toBe(2);
    expect(JSON.parse(slurp.stderr).error.message).toBe('--jq: --slurp is an option of jq, not an expression');
    // And as gh users type it, `--jq -r .uid`: named so, not "too many arguments" for the stray `.uid`.
    const twoWords = await runCommand(service, ['faces', 'get', 'xx-x', '--jq', '-r', '.uid']);
    expect(twoWords.code).toBe(2);
    expect(JSON.parse(twoWords.stderr).error.message).toBe('--jq: -r is an option of jq, not an expression');
    // And after the expression (`--jq .uid -r`): named as jq's option, not commander's "unknown option".
    const after = await runCommand(service, ['faces', 'get', 'xx-x', '--jq', '.uid', '-r']);
    expect(after.code).toBe(2);
    const afterError = JSON.parse(after.stderr).error;
    expect(afterError).toMatchObject({ code: 'invalid_jq', message: '-r is an option of jq, not of facectl' });
    expect(afterError.hint).toContain('--jq already prints strings without quotes');
    const long = await runCommand(service, ['faces', 'get', 'xx-x', '--jq', '.uid', '--raw-output']);
    expect(long.code).toBe(2);
    expect(JSON.parse(long.stderr).error.message).toBe('--raw-output is an option of jq, not of facectl');
    expect(JSON.parse(long.stderr).error.hint).toContain('as jq -r does');
    // Another of jq's options: a hint that does not speak of -r.
    const compact = await runCommand(service, ['faces', 'get', 'xx-x', '--jq', '.uid', '-c']);
    expect(compact.code).toBe(2);
    expect(JSON.parse(compact.stderr).error.hint).toMatch(/^--jq takes the expression alone .*compact when piped/);
    expect(requestCount(service)).toBe(before);
  });

  it('an expression that starts with a minus is an expression, not a jq option (`-length`, `-nan`)', async () => {
    // jq read `-length` as an option of its own command line: exit 0 with jq's usage text on stdout.
    const negated = await runCommand(service, ['faces', 'get', 'ada-lovelace', '--jq', '-(.name | length)']);
    expect(negated.code, negated.stderr).toBe(0);
    expect(negated.stdout).toBe('-12\n');
    const length = await runCommand(service, ['faces', 'get', 'ada-lovelace', '--jq', '-length']);
    expect(length.code, length.stderr).toBe(0);
    expect(length.stdout).toMatch(/^-\d+\n$/);
    const nan = await runCommand(service, ['faces', 'get', 'ada-lovelace', '--jq', '-nan']);
    expect(nan.code, nan.stderr).toBe(0);
    expect(nan.stdout).toBe('null\n');
  });

  it('a filter that fails on the answer of docs submit: exit 1 naming the document it made all the same', async () => {
    const result = await runCommand(
      service,
      ['docs', 'submit', '-', '--alias', 'ada-lovelace', '--label', 'jq-fails', '--jq', '-(.x)'],
      { stdin: 'made once' },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const made = [...service.store.values('documents')].filter((d) => d.label === 'jq-fails');
    expect(made).toHaveLength(1);
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('jq_error');
    expect(error.hint).toBe(
      `the document was created all the same: ${made[0]?.id} (\`facectl docs get ${made[0]?.id}\`); submitting again makes another`,
    );
  });

  it('a filter that fails on the answer of any other change says the change was made all the same', async () => {
    const failing = ['--jq', '-(.x)'];
    const error = (result: { code: number; stdout: string; stderr: string }) => {
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout).toBe('');
      const parsed = JSON.parse(result.stderr).error;
      expect(parsed.code).toBe('jq_error');
      // jq's own words, without jq-web's input file name (`error (at inputString:0):`).
      expect(parsed.message).toMatch(/^--jq: null \(null\) cannot be negated$/);
      return parsed.hint as string;
    };
    const face = await runCommand(service, [
      'faces',
      'create',
      '--name',
      'Jq Fails',
      '--alias',
      'jq-fails',
      ...failing,
    ]);
    const made = [...service.store.maps.faces.values()].find((f) => f.alias === 'jq-fails');
    expect(made).toBeDefined();
    expect(error(face)).toBe(
      `the face was created all the same: jq-fails (${made?.id}) (\`facectl faces get jq-fails\`)`,
    );

    const thread = await runCommand(service, [
      'threads',
      'create',
      '--alias',
      'ada-lovelace',
      '--label',
      'jq-fails',
      ...failing,
    ]);
    const threadId = [...service.store.values('threads')].find((t) => t.label === 'jq-fails')?.id;
    expect(error(thread)).toBe(
      `the thread was created all the same: ${threadId} (\`facectl threads get ${threadId}\`); creating again makes another`,
    );
    const replaced = await runCommand(service, ['threads', 'replace-messages', String(threadId), '-', ...failing], {
      stdin: JSON.stringify([{ role: 'interviewer', content: 'kept', from: 'ai' }]),
    });
    expect(error(replaced)).toBe(`the messages were replaced all the same (\`facectl threads get ${threadId}\`)`);
    expect(JSON.stringify(service.store.get('threads', String(threadId))?.messages)).toContain('kept');

    const doc = await createDocument(service, service.key('pro'), 'ada-lovelace', 'to sync');
    const synced = await runCommand(service, ['docs', 'sync', doc.document_id, ...failing]);
    expect(error(synced)).toBe(`the document was synced all the same (\`facectl docs get ${doc.document_id}\`)`);
    expect(service.store.get('documents', doc.document_id)?.synced).toBe(true);

    const viaApi = await runCommand(service, [
      'api',
      'POST',
      '/v1/faces',
      '-f',
      'name=Api',
      '-f',
      'alias=jq-api',
      ...failing,
    ]);
    expect(error(viaApi)).toBe('POST /v1/faces answered 201 all the same');
    expect([...service.store.maps.faces.values()].some((f) => f.alias === 'jq-api')).toBe(true);
    // A read that fails the filter changed nothing, and says nothing of the kind.
    const read = await runCommand(service, ['faces', 'get', 'jq-fails', ...failing]);
    expect(error(read)).toBeUndefined();
  });

  it('a filter that fails after a change of the config file says the change was made all the same', async () => {
    const failing = ['--jq', '-(.x)'];
    const hint = (result: { code: number; stdout: string; stderr: string }) => {
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout).toBe('');
      return JSON.parse(result.stderr).error.hint as string | undefined;
    };
    const set = await runCommand(service, [
      'config',
      'set',
      'base_url',
      'http://127.0.0.1:6',
      '--profile',
      'p2',
      ...failing,
    ]);
    expect(hint(set)).toBe('the change was made all the same (Set base_url to http://127.0.0.1:6 in profile p2)');
    expect(set.tc.config.data.profiles?.p2?.base_url).toBe('http://127.0.0.1:6');

    const config = {
      profiles: { p2: { base_url: 'http://127.0.0.1:6', api_key: 'fcs_abcdefgh_abcdefghabcdefghabcdefghabcdefgh' } },
    };
    const switched = await runCommand(service, ['auth', 'switch', 'p2', ...failing], { config });
    expect(hint(switched)).toBe('the default profile is p2 all the same');
    expect(switched.tc.config.data.default_profile).toBe('p2');
    const logout = await runCommand(service, ['auth', 'logout', '--profile', 'p2', ...failing], { config });
    expect(hint(logout)).toBe('the key was removed all the same (Removed the API key of profile p2)');
    expect(logout.tc.config.data.profiles?.p2?.api_key).toBeUndefined();
    // Nothing to remove: nothing was done, and nothing is said of it.
    // A change that changed nothing says nothing of the kind.
    const unset = await runCommand(service, ['config', 'unset', 'base_url', '--profile', 'p9', ...failing], {
      config: { profiles: { p9: {} } },
    });
    expect(hint(unset)).toBeUndefined();
    const again = await runCommand(service, ['auth', 'switch', 'p2', ...failing], {
      config: { ...config, default_profile: 'p2' },
    });
    expect(hint(again)).toBeUndefined();
    const none = { profiles: { p3: { base_url: 'http://127.0.0.1:6' } } };
    expect(
      hint(await runCommand(service, ['auth', 'logout', '--profile', 'p3', ...failing], { config: none })),
    ).toBeUndefined();
  });

  it("gh's `--json uid,name` field list: exit 2 saying --json takes none and how --jq picks fields", async () => {
    const before = requestCount(service);
    const result = await runCommand(service, ['faces', 'get', 'xx-x', '--json', 'uid,name']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr).error).toEqual({
      code: 'usage',
      message: '--json takes no list of fields (uid,name is read as an argument)',
      hint: "--json prints every field; to pick some, use --jq, e.g. --jq '{uid,name}'",
    });
    // Another stray argument is commander's own error still.
    const stray = await runCommand(service, ['faces', 'get', 'xx-x', 'extra']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain("too many arguments for 'get'");
    expect(requestCount(service)).toBe(before);
  });

  it('an expression over the length limit is exit 2 before jq or the service sees it; one at the limit runs', async () => {
    const aliases = () => [...service.store.maps.faces.values()].map((face) => face.alias).sort();
    const before = requestCount(service);
    const overLimit = `${'.|'.repeat(JQ_MAX_CHARACTERS / 2)}.`;
    // About 28,000 pipes made the old check spin forever; 40,000 passed it and failed after the send.
    for (const expression of [overLimit, `${'.|'.repeat(40_000)}.`]) {
      const result = await runCommand(service, [
        'faces',
        'create',
        '--name',
        'Y',
        '--alias',
        'yy-y',
        '--jq',
        expression,
      ]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(JSON.parse(result.stderr)).toEqual({
        error: {
          code: 'invalid_jq',
          message: `--jq: the expression is ${expression.length} characters; at most ${JQ_MAX_CHARACTERS}`,
          hint: 'for a longer program, pipe the --json output to jq itself',
        },
      });
    }
    expect(requestCount(service)).toBe(before);
    expect(aliases()).toEqual(['ada-lovelace']);

    // Long but valid, exactly at the limit: the face is created and the filter runs on the answer.
    const atLimit = `${'.|'.repeat(JQ_MAX_CHARACTERS / 2 - 3)}.name`.padEnd(JQ_MAX_CHARACTERS, ' ');
    expect(atLimit).toHaveLength(JQ_MAX_CHARACTERS);
    const created = await runCommand(service, ['faces', 'create', '--name', 'Zed', '--alias', 'zz-z', '--jq', atLimit]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toBe('Zed\n');
    expect(created.stderr).toBe('');
    expect(aliases()).toEqual(['ada-lovelace', 'zz-z']);
  });

  it('the check only compiles: a filter that would never end on null is sent and runs on the answer', async () => {
    const aliases = () => [...service.store.maps.faces.values()].map((face) => face.alias).sort();
    // Each of these spun forever on null in the old check (deaf to Ctrl-C), so nothing was ever sent.
    const filters = [
      'if . == null then repeat(.) else .alias end',
      'def f: if . == null then f else .alias end; f',
      'until(. != null; .) | .alias # a trailing comment',
    ];
    for (const [i, filter] of filters.entries()) {
      const alias = `loop-${i}-face`;
      const before = requestCount(service);
      const result = await runCommand(service, ['faces', 'create', '--name', 'L', '--alias', alias, '--jq', filter]);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
        code: 0,
        stdout: `${alias}\n`,
        stderr: '',
      });
      expect(requestCount(service)).toBe(before + 1);
    }
    expect(aliases()).toEqual(['ada-lovelace', 'loop-0-face', 'loop-1-face', 'loop-2-face']);
    const loc = await runCommand(service, ['faces', 'get', 'ada-lovelace', '--jq', '$__loc__ | .line']);
    expect({ code: loc.code, stdout: loc.stdout }).toEqual({ code: 0, stdout: '1\n' });
  });

  it('compile errors keep jq’s own message and position; import, module and deep nesting are refused unsent', async () => {
    const before = requestCount(service);
    const refused = async (expression: string) => {
      const result = await runCommand(service, [
        'faces',
        'create',
        '--name',
        'X',
        '--alias',
        'xx-x',
        '--jq',
        expression,
      ]);
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' });
      const { error } = JSON.parse(result.stderr);
      expect(error.code).toBe('invalid_jq');
      return error.message as string;
    };
    expect(await refused('.name | foo')).toBe('--jq: foo/0 is not defined at <top-level>, line 1: .name | foo');
    expect(await refused('{a: 1')).toMatch(
      /^--jq: syntax error, unexpected end of file, expecting '}' .*line 1: \{a: 1$/,
    );
    expect(await refused('import "a" as a; .')).toBe('--jq: module not found: a');
    expect(await refused('module {a: 1}; repeat(.)')).toBe(
      '--jq: a `module` directive is not supported (jq-web has no modules)',
    );
    expect(await refused(`${'('.repeat(JQ_MAX_NESTING + 1)}.${')'.repeat(JQ_MAX_NESTING + 1)}`)).toBe(
      `--jq: the expression nests brackets ${JQ_MAX_NESTING + 1} deep; at most ${JQ_MAX_NESTING}`,
    );
    expect(requestCount(service)).toBe(before);
    // At the limit it runs; brackets inside strings and comments do not count.
    const deep = `${'('.repeat(JQ_MAX_NESTING)}.name${')'.repeat(JQ_MAX_NESTING)} | . + "${'['.repeat(300)}" # ${'{'.repeat(300)}`;
    const result = await runCommand(service, ['faces', 'get', 'ada-lovelace', '--jq', deep]);
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 0,
      stdout: `Ada Lovelace${'['.repeat(300)}\n`,
      stderr: '',
    });
  });

  it('a filter that fails on the answer is exit 1 with jq’s message', async () => {
    const result = await runCommand(service, ['faces', 'get', 'ada-lovelace', '--jq', '.name | tonumber']);
    expect(result.code).toBe(1);
    const { error } = JSON.parse(result.stderr);
    expect(error).toMatchObject({ code: 'jq_error', message: expect.stringContaining('Invalid numeric literal') });
  });

  it('NDJSON printed as text whose filter fails on a line but the last is a failure too, not exit 0', async () => {
    const tc = createTestContext({ globals: { json: true, jq: 'if .line == 1 then error("x") else .line end' } });
    await tc.ctx.out.prepare?.();
    expect(() => tc.ctx.out.text('{"line":1}\n{"line":2}\n')).toThrow(
      expect.objectContaining({ code: 'jq_error', message: expect.stringMatching(/^--jq: .*x$/) }),
    );
    expect(tc.stdout()).toBe('');
  });

  it('the JSON answer of `facectl api` goes through it too', async () => {
    const result = await runCommand(service, ['api', 'GET', '/v1/faces/ada-lovelace', '--jq', '.alias']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('ada-lovelace\n');
  });

  it('raw strings are made safe on a terminal', async () => {
    await createFace(service, service.key('pro'), 'bell-x', { name: 'bell\u0007\u001b[2J' });
    const result = await runCommand(service, ['faces', 'get', 'bell-x', '--jq', '.name'], { stdoutIsTTY: true });
    expect(result.stdout).toBe('bell\\x07\\x1b[2J\n');
  });
});

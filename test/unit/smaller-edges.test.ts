import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { fittedWidths } from '../../src/io/output.js';
import { width } from '../../src/io/table-parts.js';
import { forProfile } from '../../src/errors.js';
import { run } from '../../src/main.js';
import { buildProgram } from '../../src/program.js';
import { currentKeyBody, type FaultServer, json, startFaultServer } from '../helpers/fault-server.js';
import { createTestContext } from '../helpers/test-context.js';
import { runInProcess as cli } from '../helpers/unit-harness.js';

/** Issue 22 item 11: the smaller edges a new user and a breaker met, each as they would check it. */

const twoProfiles = {
  default_profile: 'work',
  profiles: {
    work: { base_url: 'http://127.0.0.1:1', api_key: 'fcs_work_0123456789', api_key_base_url: 'http://127.0.0.1:1' },
    home: { base_url: 'http://127.0.0.1:2' },
  },
};

describe('a command that prints no data says what it did in one line, piped too', () => {
  it.each([
    ['auth switch home', ['auth', 'switch', 'home'], 'Switched to profile home (http://127.0.0.1:2)'],
    ['auth logout', ['auth', 'logout'], 'Removed the API key of profile work'],
    [
      'config set base_url',
      ['config', 'set', 'base_url', 'http://127.0.0.1:3', '--profile', 'home'],
      'Set base_url to http://127.0.0.1:3 in profile home',
    ],
  ])('%s: stdout empty, one line on stderr (a check mark only on a terminal)', async (_name, argv, said) => {
    const piped = await cli(argv, { config: structuredClone(twoProfiles) });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toBe('');
    expect(piped.stderr).toBe(`${said}\n`);
    const terminal = await cli(argv, {
      config: structuredClone(twoProfiles),
      stdoutIsTTY: true,
      env: { NO_COLOR: '1' },
    });
    expect(terminal.stderr).toBe(`✓ ${said}\n`);
  });
});

describe('api -f: field errors as every other command shows them', () => {
  it('one `- field: what is wrong` line each, in words, not zod text; exit 2, nothing sent', async () => {
    const result = await cli(['api', 'POST', '/v1/faces', '-f', 'name=Ada', '-F', 'default_tools=7'], {
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'fcs_unused_0123456789',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'error: invalid body for POST /v1/faces: alias, default_tools\n' +
        '  - alias: expected a string, got nothing (the field is missing)\n' +
        '  - default_tools: expected a list, got the number 7\n' +
        'fix the values listed above and run the command again\n',
    );
    const asJson = await cli(['api', 'POST', '/v1/faces', '-f', 'name=Ada', '--json'], {
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'fcs_unused_0123456789',
    });
    expect(JSON.parse(asJson.stderr).error.fields).toEqual([
      { field: 'alias', message: 'expected a string, got nothing (the field is missing)' },
    ]);
  });
});

describe('a flag that would carry the key', () => {
  it.each([['--api-key', 'fcs_secret_0123'], ['--api-key=fcs_secret_0123']])(
    '%s: exit 2, saying keys come from FACECTL_API_KEY or --api-key-stdin; the key not repeated',
    async (...flag) => {
      const result = await cli(['faces', 'get', 'ada', ...flag.filter(Boolean)]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('error: --api-key: facectl takes no API key on the command line');
      expect(result.stderr).toContain('FACECTL_API_KEY');
      expect(result.stderr).toContain('(e.g. `printenv <VARIABLE> | facectl auth login --api-key-stdin`)');
      expect(result.stderr).not.toContain('fcs_secret_0123');
    },
  );
});

describe('plan_required for oauth connect: its message said once', () => {
  let server: FaultServer;
  beforeAll(async () => {
    server = await startFaultServer((_req, res) =>
      json(res, 403, {
        detail: 'OAuth connections are only for the Connect plan; this user is on the pro plan',
        code: 'plan_required',
      }),
    );
  });
  afterAll(() => server.close());

  it.each([
    ['oauth', 'connect', 'example', '--no-browser'],
    ['oauth', 'list'],
  ])('%s %s: exit 6, said once', async (...argv) => {
    const result = await cli(argv, { baseUrl: server.baseUrl, apiKey: 'fcs_pro_0123456789' });
    expect(result.code).toBe(6);
    expect(result.stderr.split('only for the Connect plan').length - 1).toBe(1);
    expect(result.stderr).toBe(
      'error: OAuth connections are only for the Connect plan; this user is on the pro plan\n' +
        '  status: 403 plan_required\n' +
        'OAuth connections need a key of a user on the Connect plan: use one (`--profile <profile>`, the profile it ' +
        'is stored in, or FACECTL_API_KEY set to it)\n',
    );
  });
});

describe('auth status: a budget smaller than a cent is not rounded away', () => {
  let server: FaultServer;
  beforeAll(async () => {
    server = await startFaultServer((_req, res) =>
      json(res, 200, currentKeyBody({ budget_usd: 0.02, spent_usd: 0.016 })),
    );
  });
  afterAll(() => server.close());

  it('$0.004 left of $0.02 (not $0.00 of $0.02)', async () => {
    const result = await cli(['auth', 'status'], { baseUrl: server.baseUrl, apiKey: 'fcs_pro_0123456789' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('budget left\t$0.004 of $0.02\n');
  });
});

describe('profiles named on the line or in FACECTL_PROFILE', () => {
  it('config list shows a profile emptied of its settings, which auth switch still takes', async () => {
    const config = { profiles: { work: { base_url: 'http://127.0.0.1:1' }, spare: {} } };
    const piped = await cli(['config', 'list'], { config });
    expect(piped.stdout).toBe(
      '\tconfig_file\t/test/facectl/config.json\n\tdefault_profile\tdefault\n\tactive_profile\tdefault\n' +
        'spare\t\t\nwork\tbase_url\thttp://127.0.0.1:1\n',
    );
    const table = await cli(['config', 'list'], { config, stdoutIsTTY: true });
    expect(table.stdout).toMatch(/^spare\s+—\s+—$/m);
    expect((await cli(['auth', 'switch', 'spare'], { config })).code).toBe(0);
  });

  it('a fix printed for a command run with --profile X names --profile X (a newcomer ran it as printed: the default profile)', async () => {
    const result = await cli(['oauth', 'list', '--profile', 'home'], { config: twoProfiles });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('run `facectl auth login --profile home`, or set FACECTL_API_KEY\n');
    const json = await cli(['oauth', 'list', '--profile', 'home', '--json'], { config: twoProfiles });
    expect(JSON.parse(json.stderr).error.hint).toBe('run `facectl auth login --profile home`, or set FACECTL_API_KEY');
    expect(forProfile('run `facectl oauth connect example` again, or `facectl auth switch home`', 'work')).toBe(
      'run `facectl oauth connect example --profile work` again, or `facectl auth switch home`',
    );
    expect(forProfile('run `facectl auth login --profile x`', 'work')).toBe('run `facectl auth login --profile x`');
    expect(forProfile('run `facectl auth login`', undefined)).toBe('run `facectl auth login`');
    // A help page takes no profile (a ring saw `facectl oauth --help --profile default`).
    expect(forProfile('see `facectl oauth --help`', 'work')).toBe('see `facectl oauth --help`');
    // serve has no profile: its hint stays as it is (a newcomer saw `facectl serve --profile bad`).
    expect(forProfile('is `facectl serve` running? (start it with `facectl serve`)', 'bad')).toBe(
      'is `facectl serve` running? (start it with `facectl serve`)',
    );
  });

  it('a fix printed for a command run with --base-url URL names it too (a breaker ran `facectl auth login` as printed: the default URL)', async () => {
    const url = 'http://127.0.0.1:9';
    const none = await cli(['faces', 'get', 'ada', '--base-url', url], { env: {} });
    expect(none.code).toBe(3);
    expect(none.stderr).toContain(`\`facectl auth login --base-url ${url}\``);
    expect(forProfile('run `facectl auth login`, or `facectl doctor --profile x`', 'work', url)).toBe(
      `run \`facectl auth login --profile work --base-url ${url}\`, or \`facectl doctor --profile x --base-url ${url}\``,
    );
    // Not where it is given, nor into a config command (which sets what it would override), nor a URL a shell splits.
    expect(forProfile(`run \`facectl doctor --base-url ${url}\``, undefined, 'https://b.example')).toBe(
      `run \`facectl doctor --base-url ${url}\``,
    );
    expect(forProfile('run `facectl config set base_url X`', undefined, url)).toBe(
      'run `facectl config set base_url X`',
    );
    expect(forProfile('run `facectl doctor`', undefined, 'https://a.example/?x=1&y')).toBe('run `facectl doctor`');
  });

  it('config get --profile X: the fix names --profile X', async () => {
    const config = { default_profile: 'work', profiles: { work: {}, spare: {} } };
    const unset = await cli(['config', 'get', 'base_url', '--profile', 'spare'], { config });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('set it with `facectl config set base_url VALUE --profile spare`');
    const key = await cli(['config', 'get', 'api_key'], { config, env: { FACECTL_PROFILE: 'spare' } });
    expect(key.stderr).toContain('run `facectl auth login --profile spare`');
  });

  it('FACECTL_PROFILE=nosuch with FACECTL_API_KEY set: refused (exit 2), not the default base URL in silence', async () => {
    const config = { profiles: { work: { base_url: 'http://127.0.0.1:1' } } };
    for (const env of [{ FACECTL_PROFILE: 'nosuch' }, { FACECTL_PROFILE: 'a.b' }]) {
      const result = await cli(['faces', 'get', 'ada'], {
        config,
        env: { ...env, FACECTL_API_KEY: 'fcs_env_0123456789' },
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/no profile named "nosuch" \(FACECTL_PROFILE=nosuch\)|invalid profile name "a\.b"/);
    }
  });

  it.each([
    ['doctor', ['doctor', '--profile', 'a.b']],
    ['doctor, a profile the file does not hold', ['doctor', '--profile', 'nosuch']],
    ['auth switch', ['auth', 'switch', 'a.b']],
    ['config unset default_profile', ['config', 'unset', 'default_profile', '--profile', 'a.b']],
    ['config get default_profile', ['config', 'get', 'default_profile', '--profile', 'a.b']],
    ['faces get', ['faces', 'get', 'ada', '--profile', 'a.b']],
  ])('%s: a profile name that cannot be used is exit 2, as everywhere', async (_name, argv) => {
    const config = { default_profile: 'work', profiles: { work: {} } };
    const result = await cli(argv, { config, env: { FACECTL_API_KEY: 'fcs_env_0123456789' } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/^error: (invalid profile name "a\.b"|no profile named "nosuch")/);
  });
});

describe("help texts: the interface's rules as the spec states them, the rest named as facectl serve's", () => {
  /** Rules the spec leaves open ("not shown") that facectl serve decided: its slug, its bounds, its lists. */
  const SERVE_RULES =
    /3 to 64|1 to 365|takes transcript|or transcript|v1:<area>|inherited from the key|offers `example`/;

  it("every help text stating one of them says it is facectl serve's", async () => {
    const texts: string[] = [];
    const walk = (command: Command) => {
      texts.push(command.description());
      for (const option of command.options) texts.push(option.description);
      for (const argument of command.registeredArguments) texts.push(argument.description);
      command.commands.forEach(walk);
    };
    walk(await buildProgram(createTestContext().ctx));
    const stated = texts.filter((text) => SERVE_RULES.test(text));
    expect(stated.length).toBeGreaterThanOrEqual(5);
    expect(stated.filter((text) => !text.includes('facectl serve'))).toEqual([]);
  });

  it("faces create --help: the alias is a unique slug; the 3-64 rule is facectl serve's", async () => {
    const help = (await cli(['faces', 'create', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain("--alias <alias> the face's unique alias, a slug (facectl serve's rule:");
  });
});

describe("doctor's table on a terminal of 100 or 120 columns", () => {
  it('every line fits the terminal: long cells wrap inside their column, no word cut', async () => {
    const result = await cli(['doctor', '--base-url', 'http://127.0.0.1:9'], {
      stdoutIsTTY: true,
      env: { NO_COLOR: '1', FACECTL_API_KEY: 'fcs_env_0123456789', FACECTL_CONFIG_DIR: '/nonexistent/facectl-doctor' },
    });
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(8);
    expect(lines.filter((line) => line.length > 100)).toEqual([]);
    // The fix of the failed check is all there, wrapped within its column.
    const words = result.stdout.replace(/\s+/g, ' ');
    for (const word of ['`facectl', 'serve`', 'running?', '--base-url']) expect(words).toContain(word);
  });

  it('on 60 columns, where a path is wider than its column: the path is broken over lines, not cut short', async () => {
    const dir = '/nonexistent/someone-with-a-long-name/.config/facectl';
    const tc = createTestContext({
      stdoutIsTTY: true,
      env: { NO_COLOR: '1', FACECTL_API_KEY: 'fcs_env_0123456789', FACECTL_CONFIG_DIR: dir },
    });
    (tc.ctx.io.stdout as { columns?: number }).columns = 60;
    expect(await run(['doctor', '--base-url', 'http://127.0.0.1:9'], tc.ctx)).toBe(1);
    const lines = tc.stdout().trimEnd().split('\n');
    expect(lines.filter((line) => line.length > 60)).toEqual([]);
    expect(lines.join('').replace(/\s+/g, '')).toContain(`${dir}/config.json`);
  });

  it('messages on a terminal wrap at words to its width: a success line, a notice, a warning', async () => {
    const tc = createTestContext({ stdoutIsTTY: true, env: { NO_COLOR: '1' } });
    (tc.ctx.io.stderr as { columns?: number }).columns = 40;
    tc.ctx.out.success('Logged in to http://127.0.0.1:8787 with key fcs_abcdefgh… (profile default, pro plan)');
    tc.ctx.out.info('token_count 12 is a preview: nothing is charged until sync (`facectl docs sync doc_x`).');
    tc.ctx.out.warn('the profile connect is not the default one: pass --profile connect to use it');
    expect(tc.stderr().split('\n')).toEqual([
      '✓ Logged in to http://127.0.0.1:8787',
      'with key fcs_abcdefgh… (profile',
      'default, pro plan)',
      'token_count 12 is a preview: nothing is',
      'charged until sync (`facectl docs sync',
      'doc_x`).',
      'warning: the profile connect is not the',
      'default one: pass --profile connect to',
      'use it',
      '',
    ]);
    await tc.close();
  });

  it('fittedWidths: the widest columns give way down to their longest word; a table that fits is left alone', () => {
    const rows = [
      [
        'fail',
        'reachable',
        'cannot reach http://127.0.0.1:9: connection refused',
        'is `facectl serve` running? '.repeat(4),
      ],
    ];
    expect(fittedWidths(rows, 200, width)).toBeUndefined();
    const widths = fittedWidths(rows, 120, width) ?? [];
    expect(widths.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(119);
    expect(widths[2]).toBeGreaterThanOrEqual('http://127.0.0.1:9:'.length + 2);
  });
});

describe('answers from something other than the service, and what is sent as given', () => {
  let server: FaultServer;
  beforeAll(async () => {
    server = await startFaultServer();
  });
  afterAll(() => server.close());
  const asUser = () => ({ baseUrl: server.baseUrl, apiKey: 'fcs_user_0123456789' });

  it('api -i of an error whose body quotes the key back: the key cut to its prefix on stdout too; the fix fits a message', async () => {
    const key = 'fcs_abcd1234_0123456789abcdef0123';
    server.handle((req, res) =>
      json(res, 400, { detail: `bad header: ${String(req.headers.authorization)}`, code: 'bad_request' }),
    );
    const result = await cli(['api', '/v1/x', '-i'], { baseUrl: server.baseUrl, apiKey: key });
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^HTTP\/1.1 400 /);
    expect(`${result.stdout}${result.stderr}`).not.toContain(key);
    expect(result.stdout).toContain('Bearer fcs_abcd1234_…');
    // No field errors are listed: the fix does not point at a list.
    expect(result.stderr).toContain('fix what the message names and run the command again');
    expect(result.stderr).not.toContain('listed above');
  });

  it('a key refused for a missing scope under --profile ci: the fix does not repeat the refused command with that profile', async () => {
    server.handle((_req, res) =>
      json(res, 403, { detail: 'this key lacks the scope v1:keys:write', code: 'insufficient_scope' }),
    );
    const config = {
      profiles: { ci: { base_url: server.baseUrl, api_key: 'fcs_user_0123456789', api_key_base_url: server.baseUrl } },
    };
    const result = await cli(['keys', 'create', '--name', 'x', '--profile', 'ci', '--json'], { config });
    expect(result.code, result.stderr).toBe(6);
    const { hint } = JSON.parse(result.stderr).error;
    // Logging the profile in with a wider key is the fix; `keys create --profile ci` would be refused again.
    expect(hint).toContain('`facectl auth login --profile ci`');
    expect(hint).not.toMatch(/`facectl keys create[^`]*--profile ci`/);
    // Having one made: with another profile's key, which has the scope (this key would be refused the same way).
    expect(hint).toContain(
      'create one with another key that has that scope and v1:keys:write (not this one): ' +
        '`facectl keys create --scopes <scope> --profile <profile>`',
    );
  });

  it.each([
    ['an empty body', ''],
    ['an HTML page', '<html><body>Not Found</body></html>'],
  ])(
    'a 404 with %s (a web server, not the service): exit 1 naming the base URL, not exit 4 "no such face"',
    async (_n, body) => {
      server.handle((_req, res) => {
        res.writeHead(404, body ? { 'content-type': 'text/html' } : {});
        res.end(body);
      });
      const result = await cli(['faces', 'get', 'ada'], asUser());
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('GET /v1/faces/{face_id}: HTTP 404 with ');
      expect(result.stderr).toContain('not an answer of the Face Compilation Service');
      expect(result.stderr).toContain(`check the base URL (${server.baseUrl})`);
      expect(result.stderr).not.toContain('faces are found by uid or alias');
    },
  );

  // What python3 -m http.server answers a POST: 501 with an HTML page.
  const errorPage = (status: number, message: string) =>
    '<!DOCTYPE HTML>\n<html lang="en">\n    <head>\n        <meta charset="utf-8">\n' +
    '        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n' +
    `        <p>Error code: ${status}</p>\n        <p>Message: ${message}.</p>\n    </body>\n</html>\n`;
  const htmlError = (status: number, message: string) =>
    server.handle((_req, res) => {
      res.writeHead(status, { 'content-type': 'text/html;charset=utf-8' });
      res.end(errorPage(status, message));
    });

  it('a 501 with an HTML page to a POST (a web server that does not do POST): not an answer of the service, a snippet', async () => {
    htmlError(501, "Unsupported method ('POST')");
    const args = ['faces', 'create', '--name', 'Ada', '--alias', 'ada', '--json'];
    const result = await cli(args, asUser());
    expect(result.code).toBe(1);
    const { error } = JSON.parse(result.stderr);
    expect(error).toEqual({
      code: 'unexpected_response',
      message:
        'POST /v1/faces: HTTP 501 with a body that is not JSON: <!DOCTYPE HTML> <html lang="en"> <head> <meta ' +
        'charset="utf-8"> <title>Error response</title> </head> <body> <h1>Error re; ' +
        'not an answer of the Face Compilation Service',
      hint: `check the base URL (${server.baseUrl}): it should point at the service itself; run with --debug to see the exchange`,
    });
    const human = await cli(args.slice(0, -1), asUser());
    expect(human.stderr).not.toContain('Unsupported method');
    expect(human.stderr).not.toContain('try again later');
  });

  it('a 503 with an HTML page (a proxy or load balancer): try again later, with a snippet, not the page', async () => {
    htmlError(503, 'Service Unavailable');
    const result = await cli(['faces', 'create', '--name', 'Ada', '--alias', 'ada'], {
      ...asUser(),
      apiOptions: { maxRetries: 0 },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: POST /v1/faces failed with 503: <!DOCTYPE HTML> <html lang="en"> <head> <meta charset="utf-8"> ' +
        '<title>Error response</title> </head> <body> <h1>Error re\n' +
        '  status: 503 http_503\n' +
        'the service had a problem; try again later (run with --debug for the exchange)\n',
    );
  });

  it("the service's own 404 (JSON) is still exit 4", async () => {
    server.handle((_req, res) => json(res, 404, { detail: 'no face ada', code: 'face_not_found' }));
    expect((await cli(['faces', 'get', 'ada'], asUser())).code).toBe(4);
  });

  it('a tab in an api query is sent percent-encoded, not dropped', async () => {
    server.handle((_req, res) => json(res, 200, {}));
    const result = await cli(['api', '/v1/custom?q=a\tb&r=x y'], asUser());
    expect(result.code, result.stderr).toBe(0);
    expect(server.requests.at(-1)?.url).toBe('/v1/custom?q=a%09b&r=x%20y');
  });

  it('headers larger than facectl reads: exit 1 naming the answer, no "try again"', async () => {
    server.handle((_req, res) => {
      res.setHeader('x-big', 'a'.repeat(70_000));
      json(res, 200, {});
    });
    const result = await cli(['faces', 'get', 'ada'], { ...asUser(), apiOptions: { maxRetries: 0 } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('has headers larger than facectl reads');
    expect(result.stderr).not.toMatch(/try again/i);
  });
});

describe('a warning while the progress bar is drawn', () => {
  it('clears the bar line first: the warning gets a line of its own (it was appended to the bar)', async () => {
    const { PassThrough } = await import('node:stream');
    const { createOutput } = await import('../../src/io/output.js');
    const stderr = new PassThrough();
    let written = '';
    stderr.on('data', (chunk: Buffer) => (written += chunk.toString()));
    const io = {
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      stderr,
      stdinIsTTY: true,
      stdoutIsTTY: true,
      stderrIsTTY: true,
      color: false,
      canPrompt: () => true,
    };
    const out = createOutput(io, {}, { json: false, noInput: false, debug: false, insecureHttp: false });
    const bar = out.progress('Submitting');
    bar.update(773, 2000);
    out.warn('line 775: cannot reach the service');
    bar.update(774, 2000);
    bar.stop();
    expect(written.split('\r\x1b[2K')).toEqual([
      '',
      `Submitting ${'█'.repeat(9)}${'░'.repeat(15)} 773/2000`,
      'warning: line 775: cannot reach the service\n',
      `Submitting ${'█'.repeat(9)}${'░'.repeat(15)} 774/2000\n`,
    ]);
  });
});

/** Output to a terminal of `columns` (stdout, stderr and stdin terminals), and what it wrote on stdout. */
async function terminalOutput(
  columns: number,
  color: boolean,
  modules: import('../../src/io/output.js').RenderModules,
) {
  const { PassThrough } = await import('node:stream');
  const { createOutput } = await import('../../src/io/output.js');
  const stdout = Object.assign(new PassThrough(), { columns });
  let written = '';
  stdout.on('data', (chunk: Buffer) => (written += chunk.toString()));
  const io = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), color, canPrompt: () => true };
  const terminals = { stdinIsTTY: true, stdoutIsTTY: true, stderrIsTTY: true };
  const globals = { json: false, noInput: false, debug: false, insecureHttp: false };
  return { out: createOutput({ ...io, ...terminals }, {}, globals, modules), written: () => written };
}

describe('a table on a narrow colour terminal', () => {
  it('a painted label too long for its column is broken over lines, each closing its colour (the terminal stayed dim)', async () => {
    const { Chalk } = await import('chalk');
    const { Table, wrap, width } = await import('../../src/io/table-parts.js');
    for (const columns of [40, 20]) {
      const { out, written } = await terminalOutput(columns, true, {
        chalk: new Chalk({ level: 1 }),
        Table,
        wrap,
        width,
      });
      out.record({ profile_token_count_of_the_face: 0, name: 'Ada Lovelace' });
      const lines = written().trimEnd().split('\n');
      for (const line of lines) {
        expect(line.split('\x1b[2m').length, JSON.stringify({ columns, line })).toBe(line.split('\x1b[22m').length);
      }
      expect(written()).not.toContain('…');
    }
  });
});

describe('a table cell of many lines (a breaker: `threads get` of a 20,000-character message held the terminal)', () => {
  it('reaches cli-table3 a line per row, which it draws in linear time; every character shown, no line too wide', async () => {
    const { Table, wrap, width } = await import('../../src/io/table-parts.js');
    // cli-table3 measures a whole cell again for each line it draws: cells of one line keep that linear.
    const pushed: string[][] = [];
    class Recording extends Table {
      override push(...rows: string[][]): number {
        pushed.push(...rows);
        return super.push(...rows);
      }
    }
    const { out, written: all } = await terminalOutput(100, false, { Table: Recording as typeof Table, wrap, width });
    const words = 'lorem ipsum dolor '.repeat(1000);
    out.record({ role: 'user', words });
    expect(pushed.length).toBeGreaterThan(200);
    for (const row of pushed) for (const cell of row) expect(cell).not.toContain('\n');
    const written = all();
    for (const line of written.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(100);
    expect(written.match(/lorem/g)?.length).toBe(1000);
  });

  it('a word wider than the room beside the names puts each value under its name, every word whole', async () => {
    // A ring's find: at 40 columns an id, and the secret `keys create` shows once, were broken over lines beside
    // their names, and copied broken. A word wider than the terminal is left for it to wrap: copied, it is one line.
    const { Table, wrap, width } = await import('../../src/io/table-parts.js');
    const { out, written } = await terminalOutput(40, false, { Table, wrap, width });
    const id = 'usr_3Eq8OQ5faeiuo3ay';
    const key = 'fcs_AKrGG3PP_hcszceXPf9BUM6lothCF9PbU5c0bzpkE';
    out.record({ profile_token_count: 0, owned_by: id, key, content: `${'a'.repeat(20_000)} and some words after it` });
    expect(written()).toBe(
      `profile_token_count\n  0\nowned_by\n  ${id}\nkey\n  ${key}\ncontent\n  ${'a'.repeat(20_000)}\n  and some words after it\n`,
    );
  });

  it('wide characters keep their width: CJK text and emoji broken between characters, none lost or split; a tab a space', async () => {
    // A ring's find: at 40 columns a CJK name lost half its characters to "…", and emoji became U+FFFD pairs.
    const { Table, wrap, width } = await import('../../src/io/table-parts.js');
    const name = 'エイダ・ラブレス'.repeat(4);
    const emoji = '🎉😀'.repeat(6);
    for (const columns of [40, 60]) {
      const { out, written } = await terminalOutput(columns, false, { Table, wrap, width });
      out.record({ name, note: emoji, content: 'one\ttwo' });
      const lines = written().trimEnd().split('\n');
      for (const line of lines) expect(width(line), JSON.stringify({ columns, line })).toBeLessThan(columns);
      const text = lines.join('');
      expect(text).not.toContain('…');
      expect(text).not.toContain('\ufffd');
      expect(text.replace(/[^エイダ・ラブレス]/g, '')).toBe(name);
      expect(text.match(/🎉😀/gu)?.length).toBe(6);
      expect(written()).toMatch(/one two/);
    }
    // A table that fits (a ring's find: a tab in a short label reached the terminal and widened its line).
    const { out, written } = await terminalOutput(100, false, { Table, wrap, width });
    out.record({ label: 'a\tb\tc\tEND' });
    expect(written()).toBe('label  a b c END\n');
  });
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { VERSION } from '../../src/version.js';
import { type FaultServer, json, startFaultServer } from '../helpers/fault-server.js';
import { call, createFace } from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';
import { makeTempDir } from '../helpers/temp.js';
import type { TestContextOptions } from '../helpers/test-context.js';
import { runInProcess } from '../helpers/unit-harness.js';

const service = useService();
const cli = (argv: string[], options: TestContextOptions = {}) =>
  runInProcess(argv, { baseUrl: service.baseUrl, apiKey: service.key('pro'), ...options });

describe('facectl api', () => {
  it('GET a known route: the validated answer as JSON', async () => {
    const { code, stdout, stderr } = await cli(['api', 'GET', '/v1/auth/api-keys/current']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toMatchObject({ plan: 'pro', key_prefix: service.key('pro').slice(0, 12) });
  });

  it('GET /v1/faces/<alias> --json piped: the face on one line, as README says of --json', async () => {
    await createFace(service, service.key('pro'), 'api-one-line');
    const { code, stdout, stderr } = await cli(['api', '/v1/faces/api-one-line', '--json']);
    expect(code, stderr).toBe(0);
    expect(stderr).toBe('');
    const face = JSON.parse(stdout) as { alias: string };
    expect(face.alias).toBe('api-one-line');
    expect(stdout).toBe(`${JSON.stringify(face)}\n`);
  });

  it('-i --json: stdout is one JSON document {status, headers, body}; --jq sees it; a 404 too, and its key cut', async () => {
    const me = await cli(['api', '-i', '--json', 'GET', '/v1/auth/api-keys/current']);
    expect(me.code, me.stderr).toBe(0);
    // The status line and headers came first, as text: stdout was not JSON (a ring's finding).
    const answer = JSON.parse(me.stdout) as { status: number; headers: Record<string, string>; body: object };
    expect(answer).toMatchObject({ status: 200, body: { plan: 'pro', key_prefix: service.key('pro').slice(0, 12) } });
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    const status = await cli(['api', '-i', '--jq', '.status', 'GET', '/v1/auth/api-keys/current']);
    expect(status.stdout).toBe('200\n');
    // An error answer: the same one document on stdout, the error document on stderr.
    const key = service.key('pro');
    const missing = await cli(['api', '-i', '--json', 'GET', `/v1/faces/${key}`]);
    expect(missing.code).toBe(ExitCode.notFound);
    expect(JSON.parse(missing.stdout)).toMatchObject({ status: 404, headers: { 'content-type': expect.any(String) } });
    expect(missing.stdout + missing.stderr).not.toContain(key);
    expect(JSON.parse(missing.stderr)).toMatchObject({ error: { code: expect.any(String) } });
    // Without --json, as before: the status line, the headers, a blank line, the body.
    const text = await cli(['api', '-i', 'GET', '/v1/auth/api-keys/current']);
    const [head, body] = text.stdout.split('\n\n');
    expect(head).toMatch(/^HTTP\/1.1 200 OK\n(.*\n)*content-type: application\/json/);
    expect(JSON.parse(body ?? '')).toMatchObject({ plan: 'pro' });
  });

  it('POST with a body from stdin creates the face once', async () => {
    const { code, stdout } = await cli(['api', 'post', '/v1/faces', '--input', '-'], {
      stdin: JSON.stringify({ name: 'Ada Lovelace', alias: 'api-ada' }),
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ alias: 'api-ada', object: 'face' });
    const stored = await call(service, 'getFace', { key: service.key('pro'), params: { face_id: 'api-ada' } });
    expect(stored.status).toBe(200);
  });

  it('an invalid body for a known route: exit 2 naming the field, nothing sent', async () => {
    const before = service.stats.requests;
    const { code, stderr } = await cli(['api', 'POST', '/v1/faces', '--input', '-'], {
      stdin: JSON.stringify({ name: 'Ada', alias: 42 }),
    });
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toContain(
      'invalid body for POST /v1/faces: alias\n  - alias: expected a string, got the number 42\n',
    );
    expect(service.stats.requests).toBe(before);
  });

  it('malformed JSON input: exit 2 naming the source and line', async () => {
    const { code, stderr } = await cli(['api', 'POST', '/v1/faces', '--input', '-'], { stdin: '{"name": "Ada",\n' });
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toMatch(/standard input: line \d+, column \d+: invalid JSON/);
  });

  it('a path outside the contract is sent with a warning; its 404 is exit 4', async () => {
    const { code, stderr } = await cli(['api', 'GET', '/v1/nothing-here']);
    expect(stderr).toContain(
      'warning: no route of the interface matches GET /v1/nothing-here; sending it without validation',
    );
    expect(code).toBe(ExitCode.notFound);
  });

  it("a path outside the contract under a route's prefix: its 404 is no endpoint, not no face (a newcomer's find)", async () => {
    const { code, stderr } = await cli(['api', 'GET', '/v1/faces/ada-lovelace/documents']);
    expect(code).toBe(ExitCode.notFound);
    expect(stderr.trim().split('\n').at(-1)).toBe(
      'the service has no endpoint GET /v1/faces/ada-lovelace/documents; `facectl openapi` lists them',
    );
  });

  it('a path without /v1 that is a route with it: the warning names the route (gh api habit, /faces/ada)', async () => {
    const { code, stderr } = await cli(['api', '/faces/ada-lovelace']);
    expect(stderr).toContain(
      'warning: no route of the interface matches GET /faces/ada-lovelace (did you mean /v1/faces/ada-lovelace?); sending it without validation',
    );
    expect(code).toBe(ExitCode.notFound);
  });

  it('refuses a URL on another origin: the key goes only to the configured service', async () => {
    const before = service.stats.requests;
    const { code, stderr } = await cli(['api', 'GET', 'https://evil.example.com/v1/auth/api-keys/current']);
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toContain('refusing to send the API key to https://evil.example.com');
    expect(service.stats.requests).toBe(before);
  });

  it('accepts a full URL on the configured origin', async () => {
    const { code } = await cli(['api', 'GET', `${service.baseUrl}/v1/auth/api-keys/current`]);
    expect(code).toBe(0);
  });

  it('a method that is not a word, or a body for a GET: exit 2', async () => {
    expect((await cli(['api', 'G-T', '/v1/faces'])).code).toBe(ExitCode.usage);
    const withBody = await cli(['api', 'GET', '/v1/faces/api-ada', '--input', '-'], { stdin: '{}' });
    expect(withBody.code).toBe(ExitCode.usage);
    expect(withBody.stderr).toContain('takes no request body');
  });
});

/** Against a server that records what it received and answers what the test says. */
describe('facectl api: flags as gh users know them', () => {
  let server: FaultServer;
  beforeAll(async () => {
    server = await startFaultServer();
  });
  afterAll(() => server.close());
  /** Runs the command; returns what it printed and the requests the server received for it. */
  async function send(argv: string[], options: TestContextOptions = {}) {
    const before = server.requests.length;
    const result = await runInProcess(argv, { baseUrl: server.baseUrl, apiKey: 'fk_test_key_0123456789', ...options });
    return { ...result, received: server.requests.slice(before) };
  }

  it('keeps the query string of a known path (issue 12 item 13)', async () => {
    server.handle((_req, res) => json(res, 404, { detail: 'face not found', code: 'face_not_found' }));
    const { code, received } = await send(['api', 'GET', '/v1/faces/x?x=1&y=a%20b']);
    expect(received.map((r) => r.url)).toEqual(['/v1/faces/x?x=1&y=a%20b']);
    expect(code).toBe(ExitCode.notFound);
  });

  it('-X, -H and -f/-F build the request: typed values, nesting, headers replaced', async () => {
    server.handle((_req, res) => json(res, 200, { ok: true }));
    const dir = makeTempDir('facectl-api-');
    const file = join(dir, 'bio.txt');
    writeFileSync(file, 'line one\nline two\n');
    const { code, stdout, received } = await send([
      'api',
      '-X',
      'post',
      '/v1/custom/things?dry=1',
      '-H',
      'X-Trace: abc',
      '-H',
      'Accept: text/plain',
      '-f',
      'name=Ada',
      '-f',
      'count=12',
      '-F',
      'limit=12',
      '-F',
      'on=true',
      '-F',
      'gone=null',
      '-F',
      `bio=@${file}`,
      '-f',
      'meta[source]=cli',
      '-f',
      'tags[]=a',
      '-f',
      'tags[]=b',
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ ok: true });
    const [request] = received;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/v1/custom/things?dry=1');
    expect(request?.headers['x-trace']).toBe('abc');
    expect(request?.headers.accept).toBe('text/plain');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      name: 'Ada',
      count: '12',
      limit: 12,
      on: true,
      gone: null,
      bio: 'line one\nline two\n',
      meta: { source: 'cli' },
      tags: ['a', 'b'],
    });
  });

  it('fields of a GET go to the query string (without -X, fields make a POST, as in gh)', async () => {
    server.handle((_req, res) => json(res, 200, { items: [] }));
    const { code, received } = await send([
      'api',
      '-X',
      'GET',
      '/v1/custom/list?a=1',
      '-f',
      'q=two words',
      '-F',
      'n=3',
    ]);
    expect(code).toBe(0);
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/custom/list?a=1&q=two+words&n=3']);
  });

  it('a JSON answer is one line when piped (with or without --json), indented on a terminal', async () => {
    const face = { id: 'face_1', alias: 'ada', tags: ['a', 'b'], meta: { n: 1 } };
    server.handle((_req, res) => json(res, 200, face));
    for (const argv of [
      ['api', '/v1/custom/ada'],
      ['api', '/v1/custom/ada', '--json'],
    ]) {
      const piped = await send(argv);
      expect({ argv, code: piped.code, stdout: piped.stdout, stderr: piped.stderr }).toEqual({
        argv,
        code: 0,
        stdout: `${JSON.stringify(face)}\n`,
        stderr: expect.stringContaining('no route of the interface matches GET /v1/custom/ada'),
      });
      const terminal = await send(argv, { stdoutIsTTY: true });
      expect({ argv, code: terminal.code, stdout: terminal.stdout }).toEqual({
        argv,
        code: 0,
        stdout: `${JSON.stringify(face, null, 2)}\n`,
      });
    }
  });

  it('a text answer is printed as received, piped or on a terminal', async () => {
    const text = '{ not json\n  indented: kept }\n';
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(text);
    });
    for (const stdoutIsTTY of [false, true]) {
      const { code, stdout } = await send(['api', '/v1/custom/text'], { stdoutIsTTY });
      expect({ stdoutIsTTY, code, stdout }).toEqual({ stdoutIsTTY, code: 0, stdout: text });
    }
  });

  it('-i prints the status line and headers before the body', async () => {
    server.handle((_req, res) => json(res, 200, { id: 1 }, { 'x-request-id': 'req_42' }));
    const { code, stdout } = await send(['api', '-i', '/v1/custom/one']);
    expect(code).toBe(0);
    const [head, body] = stdout.split('\n\n');
    expect(head?.split('\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(head).toContain('x-request-id: req_42');
    expect(head).toMatch(/^content-type: application\/json/m);
    expect(JSON.parse(body ?? '')).toEqual({ id: 1 });
  });

  it('a known route answered outside its contract: read as commands read it; with --raw printed as received', async () => {
    // A field no command needs, of another type: read as absent (exit 0).
    server.handle((_req, res) => json(res, 200, { plan: 42 }));
    const lenient = await send(['api', 'GET', '/v1/auth/api-keys/current']);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(JSON.parse(lenient.stdout)).toEqual({});
    const raw = await send(['api', '--raw', 'GET', '/v1/auth/api-keys/current']);
    expect(raw.code).toBe(0);
    expect(JSON.parse(raw.stdout)).toEqual({ plan: 42 });
    // A field commands need (a face's alias) missing: exit 1 naming the route and the field.
    server.handle((_req, res) => json(res, 200, { name: 'Ada' }));
    const checked = await send(['api', 'GET', '/v1/faces/ada']);
    expect(checked.code).toBe(ExitCode.error);
    expect(checked.stderr).toContain('unexpected response from GET /v1/faces/{face_id} (getFace): field alias');
  });

  it('--raw sends a body the contract would refuse, byte for byte', async () => {
    server.handle((_req, res) => json(res, 201, { ok: true }));
    const body = '{"name": "A", "alias": "Not A Slug", "extra": [1, 2]}';
    const { code, received } = await send(['api', '--raw', 'POST', '/v1/faces', '--input', '-'], { stdin: body });
    expect(code).toBe(0);
    expect(received.map((r) => r.body)).toEqual([body]);
  });

  it.each([
    [401, ExitCode.auth],
    [403, ExitCode.refused],
    [404, ExitCode.notFound],
    [409, ExitCode.conflict],
    [422, ExitCode.usage],
    [429, ExitCode.rateLimited],
    [500, ExitCode.error],
  ])('a %i answer exits %i; -i still shows the answer on stdout', async (status, exit) => {
    server.handle((_req, res) => json(res, status, { detail: `status was ${status}`, code: 'some_code' }));
    const { code, stdout, stderr } = await send(['api', '-i', '/v1/custom/status'], { apiOptions: { maxRetries: 0 } });
    expect(code).toBe(exit);
    expect(stdout.split('\n')[0]).toMatch(new RegExp(`^HTTP/1.1 ${status}`));
    expect(stdout).toContain(`{"detail":"status was ${status}","code":"some_code"}\n`);
    expect(stderr).not.toBe('');
  });

  it('a 3xx answer is not a success: exit 1 naming the status and the Location (case 54)', async () => {
    server.handle((_req, res) => {
      res.writeHead(302, { location: 'https://elsewhere.example.test/v1/faces' });
      res.end();
    });
    const { code, stdout, stderr, received } = await send(['api', '/v1/faces']);
    expect(code).toBe(ExitCode.error);
    expect(stdout).toBe('');
    expect(stderr).toContain('status 302 redirecting to https://elsewhere.example.test/v1/faces');
    expect(received).toHaveLength(1);
  });

  /** Each command line is refused: exit 2 saying the message (and not "try again"), nothing sent. */
  const expectAllRefused = async (cases: [string[], string][]) => {
    for (const [argv, message] of cases) {
      const { code, stderr, received } = await send(argv);
      expect({ argv, code, has: stderr.includes(message), stderr }).toEqual({
        argv,
        code: ExitCode.usage,
        has: true,
        stderr: expect.not.stringContaining('try again'),
      });
      expect(received).toEqual([]);
    }
  };

  it('bad flags: exit 2 naming the flag, nothing sent', async () => {
    await expectAllRefused([
      [['api', '/v1/custom', '-H', 'no colon'], '-H "no colon": expected \'Name: value\''],
      [['api', '/v1/custom', '-H', 'Content-Length: 3'], '-H Content-Length: facectl sets this header itself'],
      [['api', '/v1/custom', '-f', 'novalue'], '-f "novalue": expected key=value'],
      [['api', '/v1/custom', '-F', 'a[][b]=1'], '-F a[][b]: [] may only come last in a key'],
      [['api', '/v1/custom', '-f', '__proto__[x]=1'], '-f __proto__[x]: __proto__ cannot be sent as a field'],
      [['api', '-X', 'GET', 'POST', '/v1/custom'], 'the method is given twice: POST and -X GET'],
    ]);
  });

  // These once reached the HTTP client, which refused them mid-request: reported as a dropped connection (exit 8, "try again").
  it('a control character in a header value, an Expect header, or CONNECT: exit 2 naming the flag, nothing sent', async () => {
    server.handle((_req, res) => json(res, 200, {}));
    const cases: [string[], string][] = [
      [['-H', 'X-Ctl: a\x01b'], '-H X-Ctl: the value must not contain control characters (other than tab)'],
      [['-H', 'X-Ctl: a\x7fb'], '-H X-Ctl: the value must not contain control characters (other than tab)'],
      [['-H', 'X-Ctl: a\x1bb'], '-H X-Ctl: the value must not contain control characters (other than tab)'],
      [['-H', 'X-Ctl: \u{1F600}'], '-H X-Ctl: the value must not contain characters beyond U+00FF'],
      [['-H', 'Expect: 100-continue'], '-H Expect: facectl does not send an Expect header'],
      [['-H', 'expect: anything'], '-H expect: facectl does not send an Expect header'],
      [['-X', 'CONNECT'], '-X CONNECT: facectl does not send CONNECT'],
      [['-X', 'connect'], '-X CONNECT: facectl does not send CONNECT'],
    ];
    await expectAllRefused(cases.map(([flags, message]) => [['api', ...flags, '/v1/auth/api-keys/current'], message]));
    // CONNECT given before the path too.
    const positional = await send(['api', 'CONNECT', '/v1/auth/api-keys/current']);
    expect(positional.code).toBe(ExitCode.usage);
    expect(positional.received).toEqual([]);
  });

  it('a tab and Latin-1 text in a header value are sent as given', async () => {
    server.handle((_req, res) => json(res, 200, {}));
    const { code, received } = await send(['api', '/v1/custom', '-H', 'X-Ctl: a\tb', '-H', 'X-Name: caf\u00e9']);
    expect(code).toBe(0);
    expect(received[0]?.headers['x-ctl']).toBe('a\tb');
    expect(received[0]?.headers['x-name']).toBe('caf\u00e9');
  });

  it('an Authorization header of the user replaces the stored key', async () => {
    server.handle((_req, res) => json(res, 200, {}));
    const { code, received } = await send(['api', '/v1/custom', '-H', 'Authorization: Bearer other_token']);
    expect(code).toBe(0);
    expect(received[0]?.headers.authorization).toBe('Bearer other_token');
  });

  it('sends the User-Agent facectl/<version> node/<version>', async () => {
    server.handle((_req, res) => json(res, 200, {}));
    const { received } = await send(['api', '/v1/custom']);
    expect(received[0]?.headers['user-agent']).toBe(`facectl/${VERSION} node/${process.versions.node}`);
  });
});

import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/fault-server.js';
import { type FaultServer, KEY, runIn, startFaultServer, tempFile } from './support.js';

// Cases 19-30 of docs/reliability.md: how the CLI meets what a service answers. The CLI runs in-process
// (main.run with a test context) against a scripted fault server, with short client limits where a
// case is about a limit.

const FACE = { alias: 'ada-x', created: 1767225600, owned_by: 'usr_1', uid: 'face_1', object: 'face', name: 'Ada' };
const GET_FACE = ['faces', 'get', 'face_1'];
const CREATE_FACE = ['faces', 'create', '--name', 'Ada', '--alias', 'ada-x'];

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(() => server.close());

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}

describe('service responses', () => {
  it('case 19: a 2xx with an HTML body -> "unexpected response" with the content type and a snippet, exit 1', async () => {
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Captive portal: please sign in</body></html>');
    });
    const result = await runIn(server, GET_FACE);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/unexpected response/);
    expect(result.stderr).toContain('text/html');
    expect(result.stderr).toContain('Captive portal');
    expect(result.stdout).toBe('');
  });

  it('case 20: 401 -> exit 3, no retry, the stored key kept, fix: facectl auth login', async () => {
    server.handle((_req, res) => json(res, 401, { detail: 'invalid API key', code: 'invalid_api_key' }));
    const before = server.requests.length;
    const result = await runIn(server, GET_FACE);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/invalid API key/);
    expect(lastLine(result.stderr)).toMatch(/facectl auth login/);
    expect(server.requests.length).toBe(before + 1);
    expect(JSON.stringify(result.config)).toContain(KEY);
  });

  it('case 21: 403 plan_required on OAuth -> explains the Connect plan, exit 6, no browser opened', async () => {
    server.handle((_req, res) => json(res, 403, { detail: 'OAuth requires the Connect plan', code: 'plan_required' }));
    const result = await runIn(server, ['oauth', 'connect', 'example']);
    expect(result.code).toBe(6);
    expect(result.stderr).toMatch(/Connect plan/);
    expect(result.browserOpened).toEqual([]);
  });

  it('case 22: 403 scope / allow-list and 402 budget -> exit 6 naming the scope, face, model or budget', async () => {
    const answers: [number, string, string][] = [
      [403, 'insufficient_scope', 'this key lacks the scope v1:faces:read'],
      [403, 'face_not_allowed', "face face_1 is not in this key's allowed_face_ids"],
      [403, 'model_not_allowed', "model gpt-x is not in this key's allowed_llm_models"],
      [402, 'budget_exceeded', "this key's budget of $1.00 would be exceeded"],
    ];
    for (const [status, code, detail] of answers) {
      server.handle((_req, res) => json(res, status, { detail, code }));
      const result = await runIn(server, GET_FACE);
      expect(result.code, code).toBe(6);
      expect(result.stderr).toContain(detail);
    }
  });

  it('case 23: 404 -> exit 4; 409 -> exit 5; 422 -> each field error listed, exit 2', async () => {
    server.handle((_req, res) => json(res, 404, { detail: 'face face_1 not found', code: 'not_found' }));
    const missing = await runIn(server, GET_FACE);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('face face_1 not found');
    server.handle((_req, res) => json(res, 409, { detail: 'alias ada-x is taken', code: 'alias_taken' }));
    const conflict = await runIn(server, CREATE_FACE);
    expect(conflict.code).toBe(5);
    expect(conflict.stderr).toContain('alias ada-x is taken');
    server.handle((_req, res) =>
      json(res, 422, {
        code: 'validation_error',
        detail: [
          { loc: ['body', 'name'], msg: 'too long', type: 'value_error' },
          { loc: ['body', 'default_model'], msg: 'unknown model', type: 'value_error' },
        ],
      }),
    );
    const invalid = await runIn(server, CREATE_FACE);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/name.*too long/);
    expect(invalid.stderr).toMatch(/default_model.*unknown model/);
  });

  it('case 24: 429 with Retry-After: 2 waits, then succeeds; Retry-After: 3600 -> exit 7 saying when to retry', async () => {
    server.handle((_req, res, index) =>
      index % 2 === 0
        ? json(res, 429, { detail: 'slow down', code: 'rate_limited' }, { 'retry-after': '2' })
        : json(res, 200, FACE),
    );
    server.requests.length = 0;
    const waited = await runIn(server, GET_FACE);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toContain('ada-x');
    expect(server.requests).toHaveLength(2);
    server.handle((_req, res) =>
      json(res, 429, { detail: 'slow down', code: 'rate_limited' }, { 'retry-after': '3600' }),
    );
    server.requests.length = 0;
    const long = await runIn(server, GET_FACE);
    expect(long.code).toBe(7);
    expect(lastLine(long.stderr)).toMatch(/retry after (1 h|60 min|3600 s|1 hour)/);
    expect(server.requests).toHaveLength(1);
  });

  it('case 25: 500/503 on GET retried with backoff then exit 1 (8 when the connection drops); POST with an idempotency key retried with the same key, created once', async () => {
    // architecture.md: an HTTP error status is exit 1 (test/unit/api-client pins 503 -> 1); 8 is for the network.
    for (const status of [500, 503]) {
      server.handle((_req, res) => json(res, status, { detail: 'down for a moment', code: 'unavailable' }));
      server.requests.length = 0;
      const result = await runIn(server, GET_FACE, { apiOptions: { maxRetries: 2 } });
      expect(result.code, `${status}: ${result.stderr}`).toBe(1);
      expect(result.stderr).toContain(`failed with ${status}: down for a moment`);
      expect(lastLine(result.stderr)).toMatch(/try again later/);
      expect(server.requests).toHaveLength(3);
    }
    server.handle((_req, res) => {
      res.socket?.destroy();
    });
    server.requests.length = 0;
    const dropped = await runIn(server, GET_FACE, { apiOptions: { maxRetries: 2 } });
    expect(dropped.code).toBe(8);
    expect(server.requests).toHaveLength(3);
    const created = new Set<string>();
    server.handle((req, res, index) => {
      if (index === 0) return json(res, 503, { detail: 'busy', code: 'unavailable' });
      created.add(String(req.headers['idempotency-key']));
      return json(res, 201, FACE);
    });
    server.requests.length = 0;
    const post = await runIn(server, CREATE_FACE);
    expect(post.code, post.stderr).toBe(0);
    expect(server.requests).toHaveLength(2);
    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/.{8,}/);
    expect(keys[1]).toBe(keys[0]);
    expect(created.size).toBe(1);
  });

  it('case 26: connection refused -> "cannot reach <base URL>" and "is `facectl serve` running?", exit 8', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const result = await runIn({ baseUrl: `http://127.0.0.1:${port}` }, GET_FACE, { apiOptions: { maxRetries: 1 } });
    expect(result.code).toBe(8);
    expect(result.stderr).toContain(`cannot reach http://127.0.0.1:${port}`);
    expect(result.stderr).toMatch(/is `facectl serve` running\?/);
  });

  it('case 27: reset mid-body, slow headers, slow body -> message naming the drop or the limit, exit 8, no partial output', async () => {
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"alias": "ada-x", "cre');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const reset = await runIn(server, GET_FACE, { apiOptions: { maxRetries: 0 } });
    expect(reset.code).toBe(8);
    expect(reset.stderr).toMatch(/GET \/v1\/faces\/\{face_id\}: the connection to .* dropped/);
    expect(reset.stdout).toBe('');
    expect(reset.stderr).not.toContain('done all the same');
    // A change whose answer was cut off may have been made: not "try again".
    const resetCreate = await runIn(server, ['faces', 'create', '--name', 'Cut', '--alias', 'cut-x'], {
      apiOptions: { maxRetries: 0 },
    });
    expect(resetCreate.code).toBe(8);
    expect(resetCreate.stderr).toMatch(/POST \/v1\/faces: the connection to .* dropped/);
    expect(resetCreate.stderr).toContain('it may have been done all the same (sent again, it may be done twice)');
    expect(resetCreate.stderr).not.toContain('try again');

    server.handle(() => new Promise<void>(() => {})); // never answers
    const slowHeaders = await runIn(server, GET_FACE, { apiOptions: { headersTimeoutMs: 300, maxRetries: 0 } });
    expect(slowHeaders.code).toBe(8);
    expect(slowHeaders.stderr).toContain('GET /v1/faces/{face_id}: no response within 0.3 s');
    expect(slowHeaders.stdout).toBe('');
    expect(slowHeaders.stderr).not.toContain('done all the same');
    // A change that was sent whole may have been made: the hint says to look before sending it again.
    const slowCreate = await runIn(server, ['faces', 'create', '--name', 'Slow', '--alias', 'slow-x'], {
      apiOptions: { headersTimeoutMs: 300, maxRetries: 0 },
    });
    expect(slowCreate.code).toBe(8);
    expect(slowCreate.stderr).toContain('POST /v1/faces: no response within 0.3 s');
    expect(slowCreate.stderr).toContain('it may have been done all the same (sent again, it may be done twice)');
    // A batch's line keeps its Idempotency-Key, and --resume sends it again with it: not twice (a breaker's find).
    const lines = ['a', 'b'].map((label) => JSON.stringify({ alias: 'ada', label, content: label })).join('\n');
    const slowLine = await runIn(server, ['docs', 'submit', '--file', tempFile('slow.ndjson', `${lines}\n`)], {
      apiOptions: { headersTimeoutMs: 300, maxRetries: 0 },
    });
    expect(slowLine.code, slowLine.stderr).toBe(8);
    expect(slowLine.stderr).toContain(
      'it may have been done all the same (sent again with its Idempotency-Key, it is not done twice)',
    );

    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"alias": "ada-x"');
    });
    const slowBody = await runIn(server, GET_FACE, { apiOptions: { bodyTimeoutMs: 300, maxRetries: 0 } });
    expect(slowBody.code).toBe(8);
    expect(slowBody.stderr).toContain('the response stalled (no data for 0.3 s)');
    expect(slowBody.stdout).toBe('');
  });

  it('keys create sent but never answered -> exit 8 saying a key may have been made whose secret cannot be shown again; refused -> not said', async () => {
    server.handle(() => new Promise<void>(() => {})); // never answers
    const from = server.requests.length;
    const lost = await runIn(server, ['keys', 'create', '--name', 'lost'], {
      apiOptions: { headersTimeoutMs: 300, maxRetries: 0 },
    });
    expect(lost.code).toBe(8);
    expect(server.requests.slice(from).map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/auth/api-keys']);
    expect(lost.stderr).toContain('no response within 0.3 s: a key may have been created on the service');
    expect(lost.stderr).toContain('its secret cannot be shown again');
    expect(lost.stdout).toBe('');

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const refused = await runIn({ baseUrl: `http://127.0.0.1:${port}` }, ['keys', 'create'], {
      apiOptions: { maxRetries: 0 },
    });
    expect(refused.code).toBe(8);
    expect(refused.stderr).toContain(`cannot reach http://127.0.0.1:${port}`);
    expect(refused.stderr).not.toContain('may have been created');
  });

  /**
   * Answers with a 64 MiB body that only the client's abort stops (its Content-Length declared or not);
   * `sent()` is how much was written, `closed` resolves when the response closes.
   */
  const hugeAnswer = (declareLength: boolean) => {
    const total = 64 * 1024 * 1024;
    let sent = 0;
    let closed!: Promise<void>;
    server.handle((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(declareLength ? { 'content-length': String(total) } : {}),
      });
      closed = new Promise((resolve) => res.on('close', () => resolve()));
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (sent < total && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    return { sent: () => sent, closed: () => closed, total };
  };

  it.each([
    ['of unknown length', false],
    ['with a declared Content-Length (refused before it is read)', true],
  ])('case 28: a huge response body %s -> aborted at the size cap', async (_name, declareLength) => {
    const answer = hugeAnswer(declareLength);
    const result = await runIn(server, GET_FACE, { apiOptions: { maxResponseBytes: 1024 * 1024, maxRetries: 0 } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('the response of GET /v1/faces/{face_id} is larger than 1 MiB; aborted');
    // The client hung up: the server's response closes before the 64 MiB it would have sent.
    await answer.closed();
    expect(answer.sent()).toBeLessThan(answer.total);
  });

  it('case 29: a response missing an optional field, null in a nullable one, unknown extra fields -> rendered, exit 0', async () => {
    server.handle((_req, res) =>
      json(res, 200, {
        alias: 'ada-x',
        created: 1767225600,
        owned_by: 'usr_1',
        name: null,
        default_model: null,
        shiny_new_field: { a: 1 },
      }),
    );
    const result = await runIn(server, [...GET_FACE, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(body.alias).toBe('ada-x');
    expect(body.name).toBeNull();
    expect(body.shiny_new_field).toEqual({ a: 1 });
    const table = await runIn(server, GET_FACE);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('ada-x');
  });

  it('case 30: a response missing a field the spec marks required -> exit 1 naming the route and field', async () => {
    server.handle((_req, res) => json(res, 200, { created: 1767225600, owned_by: 'usr_1' }));
    const result = await runIn(server, GET_FACE);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/getFace|GET \/v1\/faces\/face_1/);
    expect(result.stderr).toMatch(/alias/);
    expect(result.stdout).toBe('');
  });
});

import { getEventListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiClientOptions, createApiClient, type RequestValidationError } from '../../src/api/client.js';
import { routes } from '../../src/contract/index.js';
import {
  ApiError,
  AuthError,
  CancelError,
  ExitCode,
  NetworkError,
  ResponseError,
  UsageError,
} from '../../src/errors.js';
import { currentKeyBody, type FaultServer, json, startFaultServer } from '../helpers/fault-server.js';
import { failure } from '../helpers/unit-harness.js';

const KEY = 'fcs_abcdefgh_0123456789abcdefghijABCDEFGHIJ';

const face = {
  alias: 'ada-lovelace',
  created: 1_700_000_000,
  owned_by: 'usr_1',
  uid: 'face_1',
  object: 'face',
  name: 'Ada',
};

let server: FaultServer;
let waits: number[];
const clients: { close(): Promise<void> }[] = [];

function client(overrides: Partial<ApiClientOptions> = {}) {
  const made = createApiClient({
    baseUrl: server.baseUrl,
    apiKey: KEY,
    // Record the waits instead of sleeping them: the policy is what is tested, not the clock.
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...overrides,
  });
  clients.push(made);
  return made;
}

beforeEach(async () => {
  waits = [];
  server = await startFaultServer();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server.close();
});

describe('request side', () => {
  it('sends the key, JSON body, and an Idempotency-Key on creating POSTs', async () => {
    server.handle((_req, res) => json(res, 201, face));
    const created = await client().call(routes.createFace, { body: { name: 'Ada', alias: 'ada-lovelace' } });
    expect(created.alias).toBe('ada-lovelace');
    const [req] = server.requests;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/v1/faces');
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req?.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(req?.body ?? '')).toEqual({ name: 'Ada', alias: 'ada-lovelace' });
  });

  it('refuses an invalid body before sending, naming the field', async () => {
    // A type the seed states (alias is a string); the slug grammar is the local service's to check.
    const error = await failure(
      client().call(routes.createFace, { body: { name: 'Ada', alias: 42 as unknown as string } }),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(ExitCode.usage);
    expect(error.message).toBe('invalid body for POST /v1/faces: alias');
    expect((error as RequestValidationError).issues).toEqual([
      { field: 'alias', message: 'expected a string, got the number 42' },
    ]);
    expect(server.requests).toHaveLength(0);
  });

  it('percent-encodes path parameters so an id cannot change the path', async () => {
    server.handle((_req, res) => json(res, 200, face));
    await client().call(routes.getFace, { params: { face_id: '../keys?x=1' } });
    expect(server.requests[0]?.url).toBe('/v1/faces/..%2Fkeys%3Fx%3D1');
  });

  it('without a key: exit 3, nothing sent', async () => {
    const error = await failure(client({ apiKey: undefined }).call(routes.getCurrentApiKey, {}));
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).exitCode).toBe(ExitCode.auth);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses plain http to a non-loopback host unless insecureHttp', () => {
    expect(() => createApiClient({ baseUrl: 'http://api.example.com', apiKey: KEY })).toThrow(/plain http/);
    const allowed = createApiClient({ baseUrl: 'http://api.example.com', apiKey: KEY, insecureHttp: true });
    expect(allowed.baseUrl).toBe('http://api.example.com');
    clients.push(allowed);
    const tls = createApiClient({ baseUrl: 'https://api.example.com/base/', apiKey: KEY });
    expect(tls.baseUrl).toBe('https://api.example.com/base');
    clients.push(tls);
  });

  it('keeps a base path in front of every route', async () => {
    server.handle((_req, res) => json(res, 200, currentKeyBody()));
    await client({ baseUrl: `${server.baseUrl}/api/` }).call(routes.getCurrentApiKey, {});
    expect(server.requests[0]?.url).toBe('/api/v1/auth/api-keys/current');
  });
});

describe('error answers', () => {
  const cases: [number, Record<string, unknown>, number, RegExp][] = [
    [401, { detail: 'invalid key', code: 'invalid_api_key' }, ExitCode.auth, /facectl auth login/],
    [
      403,
      { detail: 'OAuth needs the Connect plan', code: 'plan_required' },
      ExitCode.refused,
      /OAuth connections need a key of a user on the Connect plan/,
    ],
    [403, { detail: 'this key lacks scope compile:write', code: 'insufficient_scope' }, ExitCode.refused, /scope/],
    [402, { detail: 'budget of $1.00 exceeded', code: 'budget_exceeded' }, ExitCode.refused, /budget/],
    [404, { detail: 'face not found', code: 'not_found' }, ExitCode.notFound, /check the key id/],
    [409, { detail: 'alias ada-lovelace exists', code: 'alias_taken' }, ExitCode.conflict, /another --alias/],
  ];
  it.each(cases)('%i %o -> exit %i with a fix', async (status, body, exitCode, hint) => {
    server.handle((_req, res) => json(res, status, body));
    const error = await failure(client().call(routes.getCurrentApiKey, {}));
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.exitCode).toBe(exitCode);
    expect(apiError.status).toBe(status);
    expect(apiError.code).toBe(body.code);
    expect(apiError.detail).toBe(body.detail);
    expect(apiError.message).toContain(String(body.detail));
    expect(apiError.hint).toMatch(hint);
    // A refusal is final: no retry.
    expect(server.requests).toHaveLength(1);
  });

  it('422 keeps the list of field errors', async () => {
    const detail = [
      { loc: ['body', 'alias'], msg: 'already used', type: 'value_error' },
      { loc: ['body', 'name'], msg: 'too long', type: 'value_error' },
    ];
    server.handle((_req, res) => json(res, 422, { detail, code: 'validation_error' }));
    const error = (await failure(
      client().call(routes.createFace, { body: { name: 'Ada', alias: 'ada-lovelace' } }),
    )) as ApiError;
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.detail).toEqual(detail);
  });
});

describe('retries', () => {
  it('429 with Retry-After: 1 waits a second, then succeeds', async () => {
    server.handle((_req, res, i) =>
      i === 0
        ? json(res, 429, { detail: 'slow down', code: 'rate_limited' }, { 'retry-after': '1' })
        : json(res, 200, currentKeyBody()),
    );
    const key = await client().call(routes.getCurrentApiKey, {});
    expect(key.id).toBe('key_abc123');
    expect(server.requests).toHaveLength(2);
    expect(waits).toEqual([1000]);
  });

  it('429 with Retry-After: 3600 gives up at once with exit 7 and says when', async () => {
    server.handle((_req, res) =>
      json(res, 429, { detail: 'slow down', code: 'rate_limited' }, { 'retry-after': '3600' }),
    );
    const error = (await failure(client().call(routes.getCurrentApiKey, {}))) as ApiError;
    expect(error.exitCode).toBe(ExitCode.rateLimited);
    expect(error.hint).toBe('retry after 60 min');
    expect(server.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('503 on GET is retried with growing backoff, then succeeds', async () => {
    server.handle((_req, res, i) => (i < 2 ? json(res, 503, { detail: 'busy' }) : json(res, 200, currentKeyBody())));
    await client().call(routes.getCurrentApiKey, {});
    expect(server.requests).toHaveLength(3);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(125);
    expect(waits[0]).toBeLessThanOrEqual(250);
    expect(waits[1]).toBeGreaterThanOrEqual(250);
    expect(waits[1]).toBeLessThanOrEqual(500);
  });

  it('503 that persists: three retries, then exit 1', async () => {
    server.handle((_req, res) => json(res, 503, { detail: 'busy' }));
    const error = (await failure(client().call(routes.getCurrentApiKey, {}))) as ApiError;
    expect(error.exitCode).toBe(ExitCode.error);
    expect(error.status).toBe(503);
    expect(server.requests).toHaveLength(4);
  });

  it('a creating POST is retried with the same Idempotency-Key', async () => {
    server.handle((_req, res, i) => (i === 0 ? json(res, 502, { detail: 'bad gateway' }) : json(res, 201, face)));
    await client().call(routes.createFace, { body: { name: 'Ada', alias: 'ada-lovelace' } });
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests;
    expect(first?.headers['idempotency-key']).toBeDefined();
    expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
  });

  it('a PATCH without an idempotency key is not retried on 503', async () => {
    server.handle((_req, res) => json(res, 503, { detail: 'busy' }));
    const error = (await failure(
      client().call(routes.replaceThreadMessages, { params: { thread_id: 'thr_1' }, body: { messages: [] } }),
    )) as ApiError;
    expect(error.status).toBe(503);
    expect(server.requests).toHaveLength(1);
  });

  it('a connection reset on GET is retried', async () => {
    server.handle((req, res, i) => {
      if (i === 0) {
        res.socket?.destroy();
        return;
      }
      json(res, 200, currentKeyBody());
      void req;
    });
    const key = await client().call(routes.getCurrentApiKey, {});
    expect(key.id).toBe('key_abc123');
    expect(server.requests).toHaveLength(2);
  });
});

describe('whether a failed request may have reached the service', () => {
  it('refused at once: unsent; dropped first, then refused on its retry: not unsent (it may have been applied)', async () => {
    const url = server.baseUrl;
    await server.close();
    const refused = await failure(createApiClient({ baseUrl: url, apiKey: KEY }).call(routes.getCurrentApiKey, {}));
    expect(refused).toMatchObject({ exitCode: ExitCode.network, unsent: true });

    server = await startFaultServer();
    const closing = server;
    // The first attempt reaches the service, its connection drops; the service is gone for the retry.
    server.handle((_req, res) => {
      void closing.close();
      res.socket?.destroy();
    });
    const error = await failure(client().call(routes.createFace, { body: { name: 'Ada', alias: 'ada-lovelace' } }));
    expect(error).toBeInstanceOf(NetworkError);
    // Not only "refused": the request may have been applied, which is what the user must know.
    expect(error.message).toBe(
      `cannot reach ${closing.baseUrl}: connection refused, on trying POST /v1/faces again after the connection ` +
        'dropped (ECONNRESET); the first attempt may have been applied',
    );
    expect(server.requests).toHaveLength(1);
    expect((error as NetworkError).unsent).toBe(false);
    server = await startFaultServer();
  });
});

describe('TLS', () => {
  it('a certificate not accepted, and a server that does not speak TLS: each named as such, exit 8, unsent', async () => {
    const fixtures = join(fileURLToPath(new URL('../fixtures/tls/', import.meta.url)));
    const secure = createHttpsServer(
      {
        key: readFileSync(join(fixtures, 'service-test-key.pem')),
        cert: readFileSync(join(fixtures, 'service-test-cert.pem')),
      },
      (_req, res) => res.end('{}'),
    );
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = secure.address() as AddressInfo;
      const untrusted = await failure(
        createApiClient({ baseUrl: `https://127.0.0.1:${port}`, apiKey: KEY }).call(routes.getCurrentApiKey, {}),
      );
      expect(untrusted).toBeInstanceOf(NetworkError);
      expect(untrusted).toMatchObject({ exitCode: ExitCode.network, code: 'tls_error', unsent: true });
      expect(untrusted.message).toMatch(
        new RegExp(`^cannot reach https://127\\.0\\.0\\.1:${port}: its TLS certificate is not accepted \\(.+\\)$`),
      );
      expect((untrusted as NetworkError).hint).toContain('NODE_EXTRA_CA_CERTS');
    } finally {
      await new Promise((resolve) => secure.close(resolve));
    }
    const plain = new URL(server.baseUrl);
    const notTls = await failure(
      createApiClient({ baseUrl: `https://127.0.0.1:${plain.port}`, apiKey: KEY }).call(routes.getCurrentApiKey, {}),
    );
    expect(notTls).toMatchObject({ exitCode: ExitCode.network, code: 'tls_error' });
    expect(notTls.message).toContain('the server there does not answer in TLS');
    expect(notTls.message).not.toContain('\n');
    expect((notTls as NetworkError).hint).toBe('check the scheme of the base URL: http:// or https://');
  });
});

describe('response side', () => {
  it('a 2xx HTML body is an unexpected response naming the content type, exit 1', async () => {
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Welcome to nginx!</body></html>');
    });
    const error = await failure(client().call(routes.getCurrentApiKey, {}));
    expect(error).toBeInstanceOf(ResponseError);
    expect((error as ResponseError).exitCode).toBe(ExitCode.error);
    expect(error.message).toContain('unexpected response');
    expect(error.message).toContain('text/html');
    expect(error.message).toContain('Welcome to nginx!');
  });

  it('a missing field a command needs (the new key): exit 1 naming the route and the field', async () => {
    server.handle((_req, res) => json(res, 201, currentKeyBody()));
    const error = await failure(client().call(routes.createApiKey, { body: {} }));
    expect(error).toBeInstanceOf(ResponseError);
    expect(error.message).toContain('POST /v1/auth/api-keys (createApiKey): field key: expected a string');
  });

  it('a missing field no command needs is read as absent, the others as they came', async () => {
    const { key_prefix: _dropped, ...withoutPrefix } = currentKeyBody();
    server.handle((_req, res) => json(res, 200, withoutPrefix));
    const got = await client().call(routes.getCurrentApiKey, {});
    expect(got.key_prefix).toBeUndefined();
    expect(got.id).toBe(withoutPrefix.id);
  });

  it('unknown extra fields and null in nullable fields are accepted and kept', async () => {
    server.handle((_req, res) =>
      json(res, 200, { ...face, uid: null, name: null, default_model: null, future_field: { nested: true } }),
    );
    const got = await client().call(routes.getFace, { params: { face_id: 'ada-lovelace' } });
    expect(got.uid).toBeNull();
    expect((got as Record<string, unknown>).future_field).toEqual({ nested: true });
    // Defaults the spec states are applied to what is missing.
    expect(got.object).toBe('face');
  });

  it('aborts a body past the size cap', async () => {
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"pad":"${'x'.repeat(64 * 1024)}"}`);
    });
    const error = await failure(client({ maxResponseBytes: 1024 }).call(routes.getCurrentApiKey, {}));
    expect(error).toBeInstanceOf(ResponseError);
    expect(error.message).toMatch(/larger than/);
  });

  it('slow headers: a timeout naming the limit, exit 8', async () => {
    server.handle(() => {
      // never answers
    });
    const error = await failure(client({ headersTimeoutMs: 200, maxRetries: 0 }).call(routes.getCurrentApiKey, {}));
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).exitCode).toBe(ExitCode.network);
    expect(error.message).toContain('no response within 0.2 s');
  });

  it('connection refused: "cannot reach" with the serve hint on loopback, exit 8', async () => {
    const url = server.baseUrl;
    await server.close();
    const error = await failure(createApiClient({ baseUrl: url, apiKey: KEY }).call(routes.getCurrentApiKey, {}));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toBe(`cannot reach ${url}: connection refused`);
    expect((error as NetworkError).hint).toContain('facectl serve');
    server = await startFaultServer();
  });
});

describe('cancelling (the client signal: Ctrl-C)', () => {
  it('ends a request in flight, exit 130, and sends nothing after it', async () => {
    // The server takes the first request and never answers it.
    server.handle(() => new Promise<void>(() => undefined));
    const controller = new AbortController();
    const api = client({ signal: controller.signal });
    const pending = failure(api.call(routes.getFace, { params: { face_id: 'ada-lovelace' } }));
    for (let i = 0; i < 200 && server.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(server.requests).toHaveLength(1);
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(CancelError);
    expect(error).toMatchObject({ exitCode: ExitCode.interrupted });
    const after = await failure(api.call(routes.getFace, { params: { face_id: 'ada-lovelace' } }));
    expect(after).toBeInstanceOf(CancelError);
    expect(server.requests).toHaveLength(1);
  });

  it('a closed client leaves nothing on a signal that outlives it', async () => {
    const controller = new AbortController();
    const api = client({ signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await api.close();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it("a call's own signal ends that call only; the client goes on", async () => {
    server.handle((req, res) => {
      if (req.url.endsWith('/slow')) return new Promise<void>(() => undefined);
      json(res, 200, face);
    });
    const api = client({ signal: new AbortController().signal });
    const mine = new AbortController();
    const slow = failure(api.call(routes.getFace, { params: { face_id: 'slow' } }, { signal: mine.signal }));
    for (let i = 0; i < 200 && server.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    mine.abort();
    expect(await slow).toBeInstanceOf(CancelError);
    await expect(api.call(routes.getFace, { params: { face_id: 'ada-lovelace' } })).resolves.toMatchObject({
      uid: 'face_1',
    });
  });
});

describe('--debug trace', () => {
  it('logs each exchange with the Authorization header redacted and never the key', async () => {
    server.handle((_req, res) => json(res, 200, currentKeyBody()));
    const lines: string[] = [];
    await client({ debug: (line) => lines.push(line) }).call(routes.getCurrentApiKey, {});
    const trace = lines.join('\n');
    expect(trace).toContain(`> GET ${server.baseUrl}/v1/auth/api-keys/current`);
    expect(trace).toContain('> authorization: Bearer [redacted]');
    expect(trace).toMatch(/< 200 \(\d+ ms\)/);
    expect(trace).toContain('< content-type: application/json');
    expect(trace).not.toContain(KEY);
    expect(trace).not.toContain(KEY.slice(13));
  });
});

describe('proxies', () => {
  it("goes through HTTP_PROXY (undici's ProxyAgent), never for a loopback base URL", async () => {
    server.handle((_req, res) => json(res, 200, currentKeyBody()));
    const target = new URL(server.baseUrl);
    const tunnels: string[] = [];
    // A CONNECT proxy that takes every tunnel to the test server: undici tunnels through it, so the
    // proxy sees only the host:port the base URL names (a name facectl itself never looks up).
    const proxy = createServer();
    proxy.on('connect', (req, socket) => {
      tunnels.push(req.url ?? '');
      const upstream = connect(Number(target.port), target.hostname, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const remote = { baseUrl: `http://api.facectl.test:${target.port}`, insecureHttp: true };
    try {
      await client({ ...remote, env: { HTTP_PROXY: proxyUrl } }).call(routes.getCurrentApiKey, {});
      expect(tunnels).toEqual([`api.facectl.test:${target.port}`]);
      expect(server.requests.at(-1)?.headers.host).toBe(`api.facectl.test:${target.port}`);
      // The loopback base URL itself: never through the proxy.
      await client({ env: { HTTP_PROXY: proxyUrl } }).call(routes.getCurrentApiKey, {});
      expect(tunnels).toHaveLength(1);
      expect(server.requests).toHaveLength(2);
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});

describe('pre-serialized bodies are checked against the contract too', () => {
  it('a raw body is sent only with its parsed form, which must pass the contract; else exit 2 and nothing sent', async () => {
    const api = client();
    const body = { alias: 'ada-lovelace', content: 'Dear Babbage', label: 'letters' };
    const raw = JSON.stringify(body);
    // A perspective outside the seed's two values is one the client itself refuses.
    const wrong = { ...body, perspective: 'sideways' } as unknown as typeof body;
    const refused = await failure(api.call(routes.createDocument, { body: wrong }, { rawBody: raw }));
    expect(refused.message).toBe('invalid body for POST /v1/compile/documents: perspective');
    expect((refused as RequestValidationError).issues).toEqual([
      { field: 'perspective', message: 'expected one of "first-person", "third-person", got a string "sideways"' },
    ]);
    expect((refused as UsageError).exitCode).toBe(ExitCode.usage);
    // No parsed form at all: refused the same way, not sent unchecked.
    const unchecked = await failure(api.call(routes.createDocument, {}, { rawBody: raw }));
    expect(unchecked.message).toMatch(/^invalid body for POST \/v1\/compile\/documents: /);
    expect(server.requests).toHaveLength(0);
  });
});

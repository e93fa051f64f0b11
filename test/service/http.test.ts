import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { beforeAll, describe, expect, test } from 'vitest';
import { call, createFace, expectContract, expectError, request } from '../helpers/service.js';
import { manualClock, startTestService } from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';

/** The HTTP layer: limits, malformed requests, timeouts, rate limits, idempotency (cases 39 and more). */

const clock = manualClock();
const limits = { maxBodyBytes: 64 * 1024, headersTimeoutMs: 300, requestTimeoutMs: 600 };
const svc = useService({ clock, ...limits }, { faces: ['http-face'] });
let key: string;
beforeAll(() => {
  key = svc.key('pro');
});

/** Sends raw bytes on a socket and collects whatever comes back until the server closes it. */
function rawExchange(port: number, payload: string, { end = false } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(payload);
      if (end) socket.end();
    });
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      data += chunk;
    });
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => {
      socket.destroy();
      reject(new Error(`no answer; got ${JSON.stringify(data)}`));
    });
  });
}

const port = () => Number(new URL(svc.baseUrl).port);

describe('case 39: oversized bodies, invalid JSON, slow clients', () => {
  test('a body over the limit is 413 payload_too_large, whether declared or streamed', async () => {
    const before = svc.store.maps.documents.size;
    const big = JSON.stringify({ alias: 'http-face', content: 'x'.repeat(70 * 1024), label: 'big' });
    const res = await call(svc, 'createDocument', { key, rawBody: big });
    expectError('createDocument', res, 413, 'payload_too_large');

    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${svc.baseUrl}/v1/compile/documents`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      });
      req.on('response', (r) => {
        let body = '';
        r.on('data', (c) => {
          body += c;
        });
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      // 80 KiB, just past the 64 KiB limit: a longer stream could outlast this file's 600 ms request
      // timeout on a busy machine (it was answered 408 once under a load average of 10).
      const chunk = 'y'.repeat(16 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < 5 && req.write(chunk)) sent++;
        if (sent < 5) req.once('drain', pump);
        else req.end();
      };
      pump();
    }).catch((error: Error) => ({ status: -1, body: error.message }));
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).code).toBe('payload_too_large');
    expect(svc.store.maps.documents.size).toBe(before);
  });

  test('the default limit is 64 MiB: a larger Content-Length is refused before reading the body', async () => {
    const other = await startTestService();
    try {
      const answer = await rawExchange(
        Number(new URL(other.baseUrl).port),
        `POST /v1/compile/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${other.key('pro')}\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024 + 1}\r\n\r\n{`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toContain('payload_too_large');
    } finally {
      await other.close();
    }
  });

  test.each([
    ['truncated JSON', '{"alias": "http-face"'],
    ['trailing garbage', '{"alias": "http-face"} x'],
    ['not UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
    // Stored as UTF-8, a lone half of a surrogate pair would come back as U+FFFD (a breaker's finding).
    ['a lone surrogate in content', '{"alias": "http-face", "label": "s", "content": "x\\ud800y"}'],
    ['a lone surrogate in a label', '{"alias": "http-face", "label": "\\uDC00", "content": "x"}'],
  ])('%s is 400 invalid_json', async (_, rawBody) => {
    const before = svc.store.count('documents');
    expectError('createDocument', await call(svc, 'createDocument', { key, rawBody }), 400, 'invalid_json');
    expect(svc.store.count('documents')).toBe(before);
  });

  test('a surrogate pair written as escapes is one character, stored and read back as sent', async () => {
    const rawBody = '{"alias": "http-face", "label": "pair", "content": "x\\ud83d\\ude00y"}';
    const made = await call(svc, 'createDocument', { key, rawBody, headers: { 'idempotency-key': 'pair-1' } });
    const doc = expectContract('createDocument', made, 201);
    const got = await call(svc, 'getDocument', { key, params: { document_id: doc.document_id } });
    expect(expectContract('getDocument', got, 200).content).toBe('x\u{1F600}y');
  });

  test('a body of the wrong shape is 422 with a {loc, msg, type} list', async () => {
    const res = await call(svc, 'createDocument', { key, body: { alias: 'http-face', content: 7, extra: true } });
    const body = expectError('createDocument', res, 422, 'validation_error');
    const locs = body.detail.map((d: { loc: unknown[] }) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.content', 'body.label', 'body']));
    for (const item of body.detail)
      expect(item).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
  });

  test('slow headers are cut off (408 and the connection closed)', async () => {
    const answer = await rawExchange(port(), 'GET /v1/auth/api-keys/current HTTP/1.1\r\nHost: x\r\n');
    expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);
  });

  test('a slow body is cut off and nothing is stored', async () => {
    const before = svc.store.maps.documents.size;
    const answer = await rawExchange(
      port(),
      `POST /v1/compile/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"alias":`,
    );
    expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);
    expect(svc.store.maps.documents.size).toBe(before);
  });
});

describe('routing', () => {
  test('an unknown path is 404 not_found; a known path with another method is 405 with Allow', async () => {
    const missing = await request(svc.baseUrl, 'GET', '/v1/nothing', { key });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'not_found' });
    const wrong = await request(svc.baseUrl, 'DELETE', '/v1/faces', { key });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
  });

  test('percent-encoded path parameters are decoded: a face is found by its encoded alias', async () => {
    expectContract('getFace', await request(svc.baseUrl, 'GET', '/v1/faces/http%2Dface', { key }), 200);
  });
});

describe('rate limit', () => {
  test('--rate-limit N: N requests per second per key, then 429 with Retry-After; other keys unaffected', async () => {
    const limited = await startTestService({ clock, rateLimit: 3 });
    try {
      const k = limited.key('free');
      for (let i = 0; i < 3; i++) expect((await call(limited, 'getCurrentApiKey', { key: k })).status).toBe(200);
      const refused = await call(limited, 'getCurrentApiKey', { key: k });
      expectError('getCurrentApiKey', refused, 429, 'rate_limited');
      expect(refused.headers.get('retry-after')).toBe('1');
      expect((await call(limited, 'getCurrentApiKey', { key: limited.key('pro') })).status).toBe(200);
      clock.advance(1000);
      expect((await call(limited, 'getCurrentApiKey', { key: k })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('idempotency', () => {
  const post = (idem: string, content: string, k = key) =>
    call(svc, 'createDocument', {
      key: k,
      body: { alias: 'http-face', content, label: 'idem' },
      headers: { 'Idempotency-Key': idem },
    });

  test('a repeat with the same key and body replays the first response and creates nothing', async () => {
    const before = svc.store.maps.documents.size;
    const first = await post('idem-1', 'same body');
    const again = await post('idem-1', 'same body');
    expect(again.status).toBe(first.status);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(svc.store.maps.documents.size).toBe(before + 1);
  });

  test('the same Idempotency-Key with another body is 422 idempotency_mismatch', async () => {
    await post('idem-2', 'first');
    expectError('createDocument', await post('idem-2', 'second'), 422, 'idempotency_mismatch');
  });

  test('records are per user: a repeat from another key of the user is replayed (one document); another user is not', async () => {
    const before = svc.store.maps.documents.size;
    const child = expectContract('createApiKey', await call(svc, 'createApiKey', { key, body: {} }), 201).key;
    const a = await post('idem-3', 'body');
    const b = await post('idem-3', 'body', child);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.text).toBe(a.text);
    expect(svc.store.maps.documents.size).toBe(before + 1);
    // Another user's Idempotency-Key of the same text is theirs: a document of their own.
    await createFace(svc, svc.key('standard'), 'http-face');
    const c = await post('idem-3', 'body', svc.key('standard'));
    expect(c.status).toBe(201);
    expect(c.headers.get('idempotent-replayed')).toBeNull();
    expect(svc.store.maps.documents.size).toBe(before + 2);
  });

  test('a key restricted to other faces does not get a replay of an answer about a face it may not use', async () => {
    const restricted = expectContract(
      'createApiKey',
      await call(svc, 'createApiKey', { key, body: { allowed_face_ids: ['elsewhere'] } }),
      201,
    ).key;
    await post('idem-face-bound', 'private words');
    expectError('createDocument', await post('idem-face-bound', 'private words', restricted), 403, 'face_not_allowed');
  });

  test('concurrent repeats create once and charge once', async () => {
    const { body } = await post('idem-doc', 'to be synced');
    const quotaUsed = () => svc.store.get('users', svc.userId('pro'))?.quota_used ?? 0;
    const used = quotaUsed();
    const syncs = await Promise.all(
      Array.from({ length: 5 }, () =>
        call(svc, 'syncDocument', {
          key,
          params: { document_id: body.document_id },
          headers: { 'Idempotency-Key': 'sync-1' },
        }),
      ),
    );
    expect(new Set(syncs.map((s) => s.text)).size).toBe(1);
    expect(syncs.filter((s) => s.headers.get('idempotent-replayed') === 'true')).toHaveLength(4);
    expect(quotaUsed()).toBe(used + body.token_count);
  });

  test('a key creation is replayed with its secret (held in memory only); no second key', async () => {
    const before = svc.store.maps.keys.size;
    const a = await call(svc, 'createApiKey', { key, body: { name: 'idem' }, headers: { 'Idempotency-Key': 'key-1' } });
    const b = await call(svc, 'createApiKey', { key, body: { name: 'idem' }, headers: { 'Idempotency-Key': 'key-1' } });
    expect(b.text).toBe(a.text);
    expect(b.body.key).toMatch(/^fcs_/);
    expect(svc.store.maps.keys.size).toBe(before + 1);
    const record = svc.store
      .statement("SELECT body FROM idempotency WHERE idempotency_key = 'key-1'", true)
      .get() as unknown[];
    expect(record).toEqual([null]);
  });

  test('a record lives 24 hours', async () => {
    const first = await post('idem-ttl', 'ttl');
    clock.advance(24 * 60 * 60 * 1000);
    const later = await post('idem-ttl', 'ttl');
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.document_id).not.toBe(first.body.document_id);
  });

  test('records past their 24 hours are purged while the service runs, not only at its start', async () => {
    await post('idem-purge', 'purge');
    const stored = (idempotencyKey: string) =>
      svc.store.statement('SELECT count(*) FROM idempotency WHERE idempotency_key = ?', true).get(idempotencyKey);
    expect(stored('idem-purge')).toEqual([1]);
    clock.advance(24 * 60 * 60 * 1000 + 1);
    // Any later idempotent write sweeps them.
    await post('idem-purge-next', 'next');
    expect(stored('idem-purge')).toEqual([0]);
    expect(stored('idem-purge-next')).toEqual([1]);
  });

  test('errors are not kept: a failed request runs again on retry', async () => {
    const res = await call(svc, 'createDocument', {
      key,
      body: { alias: 'not-yet', content: 'x', label: 'y' },
      headers: { 'Idempotency-Key': 'idem-err' },
    });
    expect(res.status).toBe(404);
    await createFace(svc, key, 'not-yet');
    const retry = await call(svc, 'createDocument', {
      key,
      body: { alias: 'not-yet', content: 'x', label: 'y' },
      headers: { 'Idempotency-Key': 'idem-err' },
    });
    expect(retry.status).toBe(201);
  });
});

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatLimit, networkErrorFrom } from '../../src/api/error-mapping.js';
import { Transport } from '../../src/api/transport.js';

// A ring's find: FACECTL_HTTP_TIMEOUT=0.001 (the documented minimum) made the overall deadline read
// `no complete answer within 0.0 s`, which says no limit at all; the other limit messages said 0.001 s.

describe('HTTP time limits in messages: as exact as they were set', () => {
  it.each([
    [1, '0.001 s'],
    [3, '0.003 s'],
    [300, '0.3 s'],
    [900, '0.9 s'],
    [1500, '1.5 s'],
    [2999, '2.999 s'],
    [3000, '3 s'],
    [100_000, '100 s'],
  ])('%d ms -> %s', (ms, shown) => {
    expect(formatLimit(ms)).toBe(shown);
  });

  it('undici timeouts name the limit that passed the same way', () => {
    const info = { method: 'GET', path: '/v1/faces/{face_id}', baseUrl: 'http://127.0.0.1:9' };
    const limits = { connectMs: 1, headersMs: 1, bodyMs: 300 };
    const error = (code: string) => Object.assign(new Error('timeout'), { code });
    const connect = networkErrorFrom(error('UND_ERR_CONNECT_TIMEOUT'), info, limits);
    expect(connect.message).toBe('cannot reach http://127.0.0.1:9: no connection within 0.001 s');
    // A limit too short looks like a service that is down: the hint names both (a ring's find).
    expect(connect.hint).toBe(
      'is `facectl serve` running? (start it with `facectl serve`, or point --base-url at the service); if it is slow to accept, set FACECTL_HTTP_TIMEOUT=SECONDS to wait longer',
    );
    expect(networkErrorFrom(error('UND_ERR_HEADERS_TIMEOUT'), info, limits).message).toBe(
      'GET /v1/faces/{face_id}: no response within 0.001 s',
    );
    expect(networkErrorFrom(error('UND_ERR_BODY_TIMEOUT'), info, limits).message).toBe(
      'GET /v1/faces/{face_id}: the response stalled (no data for 0.3 s)',
    );
  });

  describe('the overall deadline of one attempt (Transport)', () => {
    // Headers at once, then a body that never ends but never stalls: only the overall deadline ends it.
    const trickle = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
      const timer = setInterval(() => res.write(' '), 5);
      res.on('close', () => clearInterval(timer));
    });
    let baseUrl: URL;
    beforeAll(async () => {
      await new Promise<void>((resolve) => trickle.listen(0, '127.0.0.1', resolve));
      baseUrl = new URL(`http://127.0.0.1:${(trickle.address() as AddressInfo).port}`);
    });
    afterAll(() => new Promise<void>((resolve) => trickle.close(() => resolve())));

    it.each([
      [{ connectTimeoutMs: 100, headersTimeoutMs: 100, bodyTimeoutMs: 100 }, '0.3 s'],
      // Was `0.1 s` (rounded to a tenth), as 0.045 s was `0.0 s`.
      [{ connectTimeoutMs: 60, headersTimeoutMs: 60, bodyTimeoutMs: 30 }, '0.15 s'],
    ])('limits %o -> "no complete answer within %s"', async (limits, shown) => {
      const transport = new Transport({
        ...limits,
        baseUrl,
        env: {},
        maxRetries: 0,
        sleep: async () => undefined,
      });
      const info = { method: 'GET', path: '/v1/faces/{face_id}', baseUrl: baseUrl.href };
      const sent = transport.send({
        method: 'GET',
        path: '/v1/faces/x',
        headers: {},
        repeatable: false,
        signal: new AbortController().signal,
        info,
      });
      await expect(sent).rejects.toThrow(`GET /v1/faces/{face_id}: no complete answer within ${shown} (the service`);
    });
  });
});

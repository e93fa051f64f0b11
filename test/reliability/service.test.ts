import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConnectRequest } from '../../src/service/url-fetch/connect.js';
import { fetchImportUrl } from '../../src/service/url-fetch/index.js';
import { documentLoad } from '../helpers/document-load.js';
import { startServeProcess } from '../helpers/serve-process.js';
import {
  call,
  createFace,
  decideConsent,
  expectContract,
  expectError,
  manualClock,
  request,
  startTestService,
  type TestService,
  textOfTokens,
} from '../helpers/service.js';
import { ensureBuilt, tempDir } from './support.js';

// Cases 34-42 of docs/reliability.md: the local service (`facectl serve`), in-process unless the case
// is about the process (41).

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

describe('local service', () => {
  it('case 34: the secret never appears in a response after creation, in logs, or in the --data files', async () => {
    const dir = tempDir();
    svc = await startTestService({ dataFile: join(dir, 'state.json'), accessLog: true });
    const created = expectContract(
      'createApiKey',
      await call(svc, 'createApiKey', { key: svc.key('pro'), body: { name: 'ci' } }),
      201,
    );
    const secret: string = created.key;
    const tail = secret.slice(13);
    const later = [
      await call(svc, 'getCurrentApiKey', { key: secret }),
      await call(svc, 'createApiKey', { key: secret, body: { name: 'child' } }),
      await call(svc, 'createFace', { key: secret, body: { name: 'S', alias: 'secret-face' } }),
      await call(svc, 'getFace', { key: secret, params: { face_id: 'secret-face' } }),
    ];
    for (const res of later) expect(res.text + [...res.headers.values()].join('\n')).not.toContain(tail);
    expect(svc.logs.length).toBeGreaterThan(0);
    expect(svc.logs.join('\n')).not.toContain(tail);
    // Every file, the lock's owner record (FILE.lock/owner.json) included.
    const onDisk = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
      .join('\n');
    expect(onDisk).toContain(created.id);
    expect(onDisk).not.toContain(tail);
  });

  it('case 35: a wrong key of another length -> 401 (not 500)', async () => {
    svc = await startTestService();
    const real = svc.key('pro');
    for (const key of [
      'x',
      `${real}extra`,
      real.slice(0, 20),
      `${real.slice(0, 13)}${'A'.repeat(32)}`,
      'fcs_' + 'a'.repeat(500),
    ]) {
      expectError('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key }), 401, 'not_authenticated');
    }
  });

  it('case 36: expired key (injectable clock) -> 401', async () => {
    const clock = manualClock();
    svc = await startTestService({ clock });
    const child = expectContract(
      'createApiKey',
      await call(svc, 'createApiKey', { key: svc.key('pro'), body: { expires_in_days: 1 } }),
      201,
    );
    expectContract('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key: child.key }), 200);
    clock.advance(24 * 3600 * 1000 + 1000);
    const res = await call(svc, 'getCurrentApiKey', { key: child.key });
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/expired/);
  });

  it('case 37: parallel syncs that together pass a budget -> exactly the affordable ones succeed; spent_usd <= budget_usd', async () => {
    svc = await startTestService({ clock: manualClock() });
    const tokens = 1_000;
    const cost = (tokens * 2) / 1_000_000;
    const child = expectContract(
      'createApiKey',
      await call(svc, 'createApiKey', { key: svc.key('pro'), body: { budget_usd: cost * 4 } }),
      201,
    );
    await createFace(svc, svc.key('pro'), 'budget-face');
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await call(svc, 'createDocument', {
        key: child.key,
        body: { alias: 'budget-face', content: textOfTokens(tokens), label: `d${i}` },
      });
      ids.push(expectContract('createDocument', res, 201).document_id);
    }
    const results = await Promise.all(
      ids.map((id) => call(svc as TestService, 'syncDocument', { key: child.key, params: { document_id: id } })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(4);
    for (const r of results.filter((r) => r.status !== 200)) expectError('syncDocument', r, 402, 'budget_exceeded');
    const after = expectContract('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key: child.key }), 200);
    expect(after.spent_usd).toBeLessThanOrEqual(after.budget_usd);
    expect(after.spent_usd).toBeCloseTo(cost * 4, 10);
  });

  it('case 38: replayed, unknown or expired OAuth state -> 400; a code is exchanged at most once', async () => {
    const clock = manualClock();
    svc = await startTestService({ clock });
    const key = svc.key('connect');
    const { callback, callbackUrl } = await decideConsent(svc, key, 'approve');
    expect(callback.status).toBe(200);
    const replay = await request(svc.baseUrl, 'GET', `${callbackUrl.pathname}${callbackUrl.search}`);
    expect(replay.status).toBe(400);
    const unknown = new URL(callbackUrl);
    unknown.searchParams.set('state', 'never-issued');
    expect((await request(svc.baseUrl, 'GET', `${unknown.pathname}${unknown.search}`)).status).toBe(400);
    // A state older than its lifetime is refused at the consent page.
    const authorize = await call(svc, 'authorizeOAuth', { key, params: { provider: 'example' } });
    const page = new URL(authorize.body.authorize_url);
    clock.advance(11 * 60 * 1000);
    expect((await request(svc.baseUrl, 'GET', `${page.pathname}${page.search}`)).status).toBe(400);
    const list = expectContract('listOAuthConnections', await call(svc, 'listOAuthConnections', { key }), 200);
    expect(JSON.stringify(list).match(/connected_at/g) ?? []).toHaveLength(1);
  });

  it('case 39: oversized body -> 413; invalid JSON -> 400/422; slow clients are timed out', async () => {
    svc = await startTestService({ maxBodyBytes: 1024, headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const key = svc.key('pro');
    const big = await request(svc.baseUrl, 'POST', '/v1/faces', {
      key,
      body: { name: 'x'.repeat(4096), alias: 'big-face' },
    });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('payload_too_large');
    const bad = await request(svc.baseUrl, 'POST', '/v1/faces', { key, rawBody: '{"name": "x", "alias": ' });
    expect([400, 422]).toContain(bad.status);
    expect(svc.store.maps.faces.size).toBe(0);
    // A client that sends headers and then stalls in the body is cut off.
    const { connect } = await import('node:net');
    const url = new URL(svc.baseUrl);
    const closed = await new Promise<string>((resolve) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(
          `POST /v1/faces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na`,
        );
      });
      let answer = '';
      socket.on('data', (c) => {
        answer += c.toString();
      });
      socket.on('close', () => resolve(answer));
      setTimeout(() => socket.destroy(), 5000);
    });
    expect(closed).toMatch(/^HTTP\/1\.1 408|^$/);
    expect(svc.store.maps.faces.size).toBe(0);
  });

  it('case 40: import of file:, data:, private and metadata addresses, numeric/mapped loopback, credentials, or a redirect to them -> 422 url_not_allowed; the connect step is never reached for them', async () => {
    const reached: string[] = [];
    const spyConnect = async (req: ConnectRequest) => {
      reached.push(req.address);
      if (req.address === '93.184.216.34') {
        // The only "public" server: it redirects to a private address.
        return {
          status: 302,
          headers: { location: 'http://169.254.169.254/latest/meta-data' },
          remoteAddress: req.address,
          body: (async function* () {})(),
          close: () => {},
        };
      }
      throw new Error(`test spy: refusing ${req.address}`);
    };
    const lookup = async (host: string) =>
      host === 'public.test'
        ? [{ address: '93.184.216.34', family: 4 }]
        : Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }));
    svc = await startTestService({
      fetchUrl: async (url, options) => {
        const result = await fetchImportUrl(url, { ...options, lookup, connect: spyConnect, timeoutMs: 3000 });
        return result as never;
      },
    });
    const key = svc.key('pro');
    const face = await createFace(svc, key, 'import-face');
    const urls = [
      'file:///etc/passwd',
      'data:text/plain,hello',
      'http://127.0.0.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
      'http://user:pass@example.com/',
      'http://public.test/redirect',
    ];
    for (const url of urls) {
      const res = await call(svc, 'importIntoFace', { key, params: { face_id: face.uid }, body: { url } });
      expect(res.status, url).toBe(422);
      expect(res.body.code, url).toBe('url_not_allowed');
      expect(res.text).not.toContain('pass@');
    }
    expect(reached).toEqual(['93.184.216.34']);
    expect(svc.store.maps.documents.size).toBe(0);
  });

  it('case 41: kill -9 of `facectl serve --data FILE` under load -> restart loads a valid state with every 2xx-answered request', async () => {
    ensureBuilt();
    const file = join(tempDir(), 'state.json');
    const remote = await startServeProcess(['--data', file]);
    const key = remote.key('pro');
    await createFace(remote, key, 'load-face');
    const load = documentLoad(remote, key, 'load-face', 6);
    const { acknowledged } = load;
    await expect.poll(() => acknowledged.length, { timeout: 20_000 }).toBeGreaterThan(100);
    await remote.kill();
    await load.stop();
    svc = await startTestService({ dataFile: file });
    const stored = new Set(svc.store.maps.documents.keys());
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
  });

  it('case 42: billing falls back oauth -> compile quota -> credits -> 402 as each runs out', async () => {
    svc = await startTestService({ clock: manualClock() });
    const s = svc;
    const sync = async (plan: 'standard' | 'connect', tokens: number) => {
      const alias = `bill-${plan}`;
      if (!s.store.faceByAlias(s.userId(plan), alias)) await createFace(s, s.key(plan), alias);
      const doc = expectContract(
        'createDocument',
        await call(s, 'createDocument', {
          key: s.key(plan),
          body: { alias, content: textOfTokens(tokens), label: 'd' },
        }),
        201,
      );
      return call(s, 'syncDocument', { key: s.key(plan), params: { document_id: doc.document_id } });
    };
    // connect: oauth while connected, then credits once disconnected.
    await decideConsent(s, s.key('connect'), 'approve');
    expect(expectContract('syncDocument', await sync('connect', 2_000), 200).billing_source).toBe('oauth');
    await call(s, 'disconnectOAuth', { key: s.key('connect'), params: { provider: 'example' } });
    expect(expectContract('syncDocument', await sync('connect', 2_000), 200).billing_source).toBe('credits');
    // standard: compile quota while it covers the sync, then credits, then 402.
    expect(expectContract('syncDocument', await sync('standard', 90_000), 200).billing_source).toBe('compile');
    expect(expectContract('syncDocument', await sync('standard', 20_000), 200).billing_source).toBe('credits');
    const user = s.store.get('users', s.userId('standard'));
    if (user) s.store.put('users', { ...user, credits_micro: 10 }); // test seam: spend the credits without syncing megabytes
    expectError('syncDocument', await sync('standard', 20_000), 402, 'insufficient_credits');
    expect(s.store.get('users', s.userId('standard'))?.credits_micro).toBe(10);
  });
});

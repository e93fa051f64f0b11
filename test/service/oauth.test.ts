import { beforeEach, describe, expect, test } from 'vitest';
import { CLIENT_ID, OAuthFlows } from '../../src/service/oauth-flow.js';
import { call, decideConsent, expectContract, expectError, manualClock, type Plan } from '../helpers/service.js';
import { request, startTestService } from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';

/** The OAuth endpoints and the flow behind them (local-service.md "OAuth"; reliability.md case 38). */

// A fresh service for each test, on a clock set back to the same start.
const clock = manualClock();
beforeEach(() => clock.set('2026-03-15T12:00:00.000Z'));
const svc = useService({ clock }, { each: true });

const form = (fields: Record<string, string>) => ({
  rawBody: new URLSearchParams(fields).toString(),
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
});
/** GETs a URL of the service (a consent page, a callback) by its path and query. */
const visit = (url: URL) => request(svc.baseUrl, 'GET', `${url.pathname}${url.search}`);
/** POSTs the consent form of the page at `url`: its query's fields, with `fields` added or replaced. */
const decide = (url: URL, fields: Record<string, string>) =>
  request(svc.baseUrl, 'POST', url.pathname, form({ ...Object.fromEntries(url.searchParams), ...fields }));

async function authorizeUrl(key = svc.key('connect')): Promise<URL> {
  const res = await call(svc, 'authorizeOAuth', { key, params: { provider: 'example' } });
  return new URL(expectContract('authorizeOAuth', res, 200).authorize_url);
}

async function connections(key = svc.key('connect')) {
  return expectContract('listOAuthConnections', await call(svc, 'listOAuthConnections', { key }), 200);
}

describe.each(['free', 'standard', 'pro'] as Plan[])('403 plan_required for the %s plan', (plan) => {
  test.each([
    ['listOAuthConnections', {}],
    ['authorizeOAuth', { provider: 'example' }],
    ['disconnectOAuth', { provider: 'example' }],
    ['authorizeOAuth', { provider: 'unknown' }],
  ] as const)('%s %o', async (name, params) => {
    const res = await call(svc, name, { key: svc.key(plan), params });
    expect(expectError(name, res, 403, 'plan_required').detail).toContain('Connect plan');
  });
});

test('connect plan: an unknown provider is 404 unknown_provider', async () => {
  for (const name of ['authorizeOAuth', 'disconnectOAuth'] as const) {
    expectError(
      name,
      await call(svc, name, { key: svc.key('connect'), params: { provider: 'github' } }),
      404,
      'unknown_provider',
    );
  }
});

test('authorize: a consent URL with a random state and PKCE S256 (the verifier never leaves the service)', async () => {
  const a = await authorizeUrl();
  const b = await authorizeUrl();
  expect(a.origin).toBe(svc.baseUrl);
  expect(a.searchParams.get('code_challenge_method')).toBe('S256');
  expect(a.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(a.searchParams.get('state')).toMatch(/^[A-Za-z0-9]{32}$/);
  expect(a.searchParams.get('state')).not.toBe(b.searchParams.get('state'));
  expect(a.searchParams.has('code_verifier')).toBe(false);
});

test('the consent page names the provider and the account and offers Approve and Deny', async () => {
  const url = await authorizeUrl();
  const page = await visit(url);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.headers.get('x-frame-options')).toBe('DENY');
  expect(page.text).toContain('Connect to example');
  expect(page.text).toContain('connect@facectl.local');
  expect(page.text).toMatch(/<form method="post"/);
  expect(page.text).toMatch(/<button[^>]*value="approve"[^>]*>Approve<\/button>/);
  expect(page.text).toMatch(/<button[^>]*value="deny"[^>]*>Deny<\/button>/);
});

test('approve: the callback exchanges the code, stores the connection with connected_at; disconnect removes it', async () => {
  expect(await connections()).toEqual([{ provider: 'example', connected: false }]);
  const { callback } = await decideConsent(svc, svc.key('connect'), 'approve');
  expectContract('oauthCallback', callback, 200);
  expect(callback.text).toContain('Connected to example');
  expect(await connections()).toEqual([
    { provider: 'example', connected: true, connected_at: clock.now().toISOString() },
  ]);
  expect(svc.stats.tokenExchanges).toBe(1);
  const res = await call(svc, 'disconnectOAuth', { key: svc.key('connect'), params: { provider: 'example' } });
  expect(expectContract('disconnectOAuth', res, 200)).toEqual({ detail: 'Disconnected from example' });
  expect((await connections())[0].connected).toBe(false);
  expectError(
    'disconnectOAuth',
    await call(svc, 'disconnectOAuth', { key: svc.key('connect'), params: { provider: 'example' } }),
    404,
    'not_connected',
  );
});

test('deny: the callback reports access denied and nothing is connected', async () => {
  const { callback, callbackUrl } = await decideConsent(svc, svc.key('connect'), 'deny');
  expect(callbackUrl.searchParams.get('error')).toBe('access_denied');
  expect(callbackUrl.searchParams.has('code')).toBe(false);
  expect(callback.status).toBe(200);
  expect(callback.text).toContain('Not connected');
  // The CLI cannot learn of a denial: the page says that it waits out its timeout, and how to end or retry.
  expect(callback.text).toContain(
    'Nothing was connected: access was denied on the consent page. facectl oauth connect, in your terminal, keeps ' +
      'waiting until its timeout (--timeout): press Ctrl-C there to stop it, or run facectl oauth connect example ' +
      'again to retry.',
  );
  expect((await connections())[0].connected).toBe(false);
  expect(svc.stats.tokenExchanges).toBe(0);
});

describe('case 38: replayed, unknown or expired state -> 400; a code is exchanged at most once', () => {
  test('a replayed callback is 400 (HTML, not JSON) and exchanges nothing more', async () => {
    const { callbackUrl } = await decideConsent(svc, svc.key('connect'), 'approve');
    const replay = await visit(callbackUrl);
    expect(replay.status).toBe(400);
    expect(replay.headers.get('content-type')).toMatch(/^text\/html/);
    expect(replay.body).toBeUndefined();
    expect(svc.stats.tokenExchanges).toBe(1);
  });

  test('a code presented again with a fresh state is refused: exchanged at most once', async () => {
    const { callbackUrl } = await decideConsent(svc, svc.key('connect'), 'approve');
    const code = callbackUrl.searchParams.get('code') as string;
    await call(svc, 'disconnectOAuth', { key: svc.key('connect'), params: { provider: 'example' } });
    const fresh = (await authorizeUrl()).searchParams.get('state') as string;
    const reuse = await request(svc.baseUrl, 'GET', `/v1/oauth/example/callback?code=${code}&state=${fresh}`);
    expect(reuse.status).toBe(400);
    expect(svc.stats.tokenExchanges).toBe(1);
    expect((await connections())[0].connected).toBe(false);
  });

  test('the provider token endpoint exchanges a code once, even with the right verifier', () => {
    const flows = new OAuthFlows(clock);
    const url = new URL(flows.start('http://127.0.0.1:1', 'example', { id: 'usr_1', account: 'a@b' }));
    const pending = flows.undecided('example', url.searchParams);
    const code = new URL(flows.decide(pending, true)).searchParams.get('code') as string;
    const input = { code, codeVerifier: pending.codeVerifier, redirectUri: pending.redirectUri, clientId: CLIENT_ID };
    expect(flows.exchange(input).access_token).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(() => flows.exchange(input)).toThrow(/already used/);
  });

  test('an unknown state is 400 at the callback and on the consent page', async () => {
    const cb = await request(svc.baseUrl, 'GET', '/v1/oauth/example/callback?code=abc&state=nope');
    expect(cb.status).toBe(400);
    const url = await authorizeUrl();
    url.searchParams.set('state', 'forged');
    expect((await visit(url)).status).toBe(400);
  });

  test('a state expires after 10 minutes, on the consent page and at the callback', async () => {
    const url = await authorizeUrl();
    clock.advance(10 * 60 * 1000);
    expect((await visit(url)).status).toBe(400);
    const consent = await decide(url, { decision: 'approve' });
    expect(consent.status).toBe(400);

    const late = await authorizeUrl();
    const approved = await decide(late, { decision: 'approve' });
    expect(approved.status).toBe(302);
    clock.advance(10 * 60 * 1000 + 1);
    const target = new URL(approved.headers.get('location') as string);
    expect((await visit(target)).status).toBe(400);
    expect((await connections())[0].connected).toBe(false);
  });

  test('a state can be decided once; a tampered PKCE challenge is refused', async () => {
    const url = await authorizeUrl();
    expect((await decide(url, { decision: 'deny' })).status).toBe(302);
    expect((await decide(url, { decision: 'approve' })).status).toBe(400);

    const other = await authorizeUrl();
    expect((await decide(other, { code_challenge: 'A'.repeat(43), decision: 'approve' })).status).toBe(400);
  });
});

test('the state is bound to the user who asked: the connection goes to that user only', async () => {
  await decideConsent(svc, svc.key('connect'), 'approve');
  const conns = [...svc.store.values('connections')];
  expect(conns).toHaveLength(1);
  expect(conns[0]?.user_id).toBe(svc.userId('connect'));
  expect(JSON.stringify(conns)).not.toMatch(/access_token/);
});

test('--oauth-provider NAME: the provider id is configurable; the default one is then unknown', async () => {
  const acme = await startTestService({ oauthProvider: 'acme' });
  try {
    const key = acme.key('connect');
    expectError(
      'authorizeOAuth',
      await call(acme, 'authorizeOAuth', { key, params: { provider: 'example' } }),
      404,
      'unknown_provider',
    );
    const url = new URL(
      expectContract('authorizeOAuth', await call(acme, 'authorizeOAuth', { key, params: { provider: 'acme' } }), 200)
        .authorize_url,
    );
    expect(url.pathname).toBe('/provider/acme/authorize');
    const list = expectContract('listOAuthConnections', await call(acme, 'listOAuthConnections', { key }), 200);
    expect(list).toEqual([{ provider: 'acme', connected: false }]);
  } finally {
    await acme.close();
  }
});

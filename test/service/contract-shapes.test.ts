import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { type RouteName, routes } from '../../src/contract/index.js';
import { call, expectContract, manualClock, type Plan, request, startTestService } from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';

/**
 * Every route, for every plan, on its success path and its error paths, answers a body that the
 * contract accepts: the route's response schema for 2xx, `{detail, code}` for errors.
 */

const PLANS: Plan[] = ['free', 'standard', 'pro', 'connect'];
const clock = manualClock();
const seen = new Set<RouteName>();

function check(name: RouteName, res: Awaited<ReturnType<typeof call>>, status: number) {
  seen.add(name);
  return expectContract(name, res, status);
}

const svc = useService({
  clock,
  fetchUrl: async (url) => ({ text: `Imported text from ${url}.`, finalUrl: url, contentType: 'text/plain' }),
});

describe.each(PLANS)('every route on the %s plan', (plan) => {
  test('success paths answer bodies the contract accepts', async () => {
    const key = svc.key(plan);
    const alias = `face-${plan}`;
    const face = check('createFace', await call(svc, 'createFace', { key, body: { name: 'Ada', alias } }), 201);
    check('getFace', await call(svc, 'getFace', { key, params: { face_id: face.uid } }), 200);
    check('getFace', await call(svc, 'getFace', { key, params: { face_id: alias } }), 200);
    const imported = check(
      'importIntoFace',
      await call(svc, 'importIntoFace', {
        key,
        params: { face_id: alias },
        body: { url: 'https://example.org/a.txt' },
      }),
      201,
    );
    expect(imported.type).toBe('document');
    const doc = check(
      'createDocument',
      await call(svc, 'createDocument', {
        key,
        body: { alias, content: 'Ada wrote the first program.', label: 'bio' },
      }),
      201,
    );
    const id = { document_id: doc.document_id };
    check('getDocument', await call(svc, 'getDocument', { key, params: id }), 200);
    check('editDocument', await call(svc, 'editDocument', { key, params: id, body: { label: 'biography' } }), 200);
    check('syncDocument', await call(svc, 'syncDocument', { key, params: id }), 200);
    clock.advance(10_000);
    const ready = check('getDocument', await call(svc, 'getDocument', { key, params: id }), 200);
    expect(ready.prepare_status).toBe('ready');

    const thread = check('createThread', await call(svc, 'createThread', { key, body: { alias, label: 'talk' } }), 201);
    const tid = { thread_id: thread.thread_id };
    const messages = [{ role: 'user', content: 'Tell me about the engine.', from: 'Interviewer' }];
    check(
      'replaceThreadMessages',
      await call(svc, 'replaceThreadMessages', { key, params: tid, body: { messages } }),
      200,
    );
    check('getThread', await call(svc, 'getThread', { key, params: tid }), 200);
    check('syncThread', await call(svc, 'syncThread', { key, params: tid }), 200);

    check('createApiKey', await call(svc, 'createApiKey', { key, body: { name: 'ci' } }), 201);
    check('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key }), 200);

    const oauthStatus = plan === 'connect' ? 200 : 403;
    check('listOAuthConnections', await call(svc, 'listOAuthConnections', { key }), oauthStatus);
    check('authorizeOAuth', await call(svc, 'authorizeOAuth', { key, params: { provider: 'example' } }), oauthStatus);
    check(
      'disconnectOAuth',
      await call(svc, 'disconnectOAuth', { key, params: { provider: 'example' } }),
      plan === 'connect' ? 404 : 403,
    );
  });

  test('error paths answer {detail, code}', async () => {
    const key = svc.key(plan);
    for (const [name, route] of Object.entries(routes) as [RouteName, (typeof routes)[RouteName]][]) {
      if (name === 'oauthCallback') continue;
      const params = { face_id: 'nope', document_id: 'doc_nope', thread_id: 'thr_nope', provider: 'example' };
      const noKey = await call(svc, name, { params, body: route.body ? {} : undefined });
      check(name, noKey, 401);
      expect(noKey.headers.get('www-authenticate')).toMatch(/^Bearer/);
      if (route.body) {
        check(name, await call(svc, name, { key, params, rawBody: '{"oops"' }), 400);
      }
    }
    check('getFace', await call(svc, 'getFace', { key, params: { face_id: 'no-such-face' } }), 404);
    check('getDocument', await call(svc, 'getDocument', { key, params: { document_id: 'doc_x' } }), 404);
    check(
      'editDocument',
      await call(svc, 'editDocument', { key, params: { document_id: 'doc_x' }, body: { label: 'y' } }),
      404,
    );
    check('syncDocument', await call(svc, 'syncDocument', { key, params: { document_id: 'doc_x' } }), 404);
    check('getThread', await call(svc, 'getThread', { key, params: { thread_id: 'thr_x' } }), 404);
    check('syncThread', await call(svc, 'syncThread', { key, params: { thread_id: 'thr_x' } }), 404);
    check(
      'replaceThreadMessages',
      await call(svc, 'replaceThreadMessages', { key, params: { thread_id: 'thr_x' }, body: { messages: [] } }),
      404,
    );
    check('createFace', await call(svc, 'createFace', { key, body: { name: 'X', alias: 'Not A Slug' } }), 422);
    // Its own face to collide with: this test does not rely on the success-path test having run.
    const taken = `taken-${plan}`;
    check('createFace', await call(svc, 'createFace', { key, body: { name: 'Ada', alias: taken } }), 201);
    check('createFace', await call(svc, 'createFace', { key, body: { name: 'Ada', alias: taken } }), 409);
    check(
      'createDocument',
      await call(svc, 'createDocument', { key, body: { alias: 'missing-face', content: 'x', label: 'y' } }),
      404,
    );
    check('createThread', await call(svc, 'createThread', { key, body: { alias: 'missing-face', label: 'y' } }), 404);
    check(
      'importIntoFace',
      await call(svc, 'importIntoFace', { key, params: { face_id: 'missing-face' }, body: { url: 'https://x.test/' } }),
      404,
    );
    check('createApiKey', await call(svc, 'createApiKey', { key, body: { expires_in_days: 0 } }), 422);
    const oauthNotFound = plan === 'connect' ? 404 : 403;
    check('authorizeOAuth', await call(svc, 'authorizeOAuth', { key, params: { provider: 'other' } }), oauthNotFound);
    check('disconnectOAuth', await call(svc, 'disconnectOAuth', { key, params: { provider: 'other' } }), oauthNotFound);
  });
});

test('the OAuth callback answers HTML on its success and error paths', async () => {
  // A service of its own: the connection made here must not change what the plan tests see.
  const own = await startTestService({ clock });
  const key = own.key('connect');
  const bad = await call(own, 'oauthCallback', { params: { provider: 'example' } });
  check('oauthCallback', bad, 400);
  expect(bad.headers.get('content-type')).toMatch(/^text\/html/);
  expect(bad.body).toBeUndefined();

  const { body } = await call(own, 'authorizeOAuth', { key, params: { provider: 'example' } });
  const consent = await request(own.baseUrl, 'POST', new URL(body.authorize_url).pathname, {
    rawBody: new URLSearchParams({
      ...Object.fromEntries(new URL(body.authorize_url).searchParams),
      decision: 'approve',
    }).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  expect(consent.status).toBe(302);
  const callback = new URL(consent.headers.get('location') as string);
  const ok = await request(own.baseUrl, 'GET', `${callback.pathname}${callback.search}`);
  check('oauthCallback', ok, 200);
  expect(ok.text).toContain('Connected to example');
  await own.close();
});

// Checked after the file's other tests in whatever order they ran; only when all of them ran (a
// filtered run, -t, exercises fewer routes by design).
const TESTS = PLANS.length * 2 + 1;
let finished = 0;
afterEach(() => {
  finished++;
});
afterAll(() => {
  if (finished === TESTS)
    expect([...seen].sort(), 'every route of the contract was exercised').toEqual(Object.keys(routes).sort());
});

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { routes } from '../../src/contract/index.js';
import { call, expectContract, manualClock, request, startTestService, } from '../helpers/service.js';
/**
 * Every route, for every plan, on its success path and its error paths, answers a body that the
 * contract accepts: the route's response schema for 2xx, `{detail, code}` for errors.
 */
const PLANS = ['free', 'standard', 'pro', 'connect'];
const clock = manualClock();
let svc;
const seen = new Set();
function check(name, res, status) {
    seen.add(name);
    return expectContract(name, res, status);
}
beforeAll(async () => {
    svc = await startTestService({
        clock,
        fetchUrl: async (url) => ({ text: `Imported text from ${url}.`, finalUrl: url, contentType: 'text/plain' }),
    });
});
afterAll(() => svc.close());
describe.each(PLANS)('every route on the %s plan', (plan) => {
    test('success paths answer bodies the contract accepts', async () => {
        const key = svc.key(plan);
        const alias = `face-${plan}`;
        const face = check('createFace', await call(svc, 'createFace', { key, body: { name: 'Ada', alias } }), 201);
        check('getFace', await call(svc, 'getFace', { key, params: { face_id: face.uid } }), 200);
        check('getFace', await call(svc, 'getFace', { key, params: { face_id: alias } }), 200);
        const imported = check('importIntoFace', await call(svc, 'importIntoFace', {
            key,
            params: { face_id: alias },
            body: { url: 'https://example.org/a.txt' },
        }), 201);
        expect(imported.type).toBe('document');
        const doc = check('createDocument', await call(svc, 'createDocument', {
            key,
            body: { alias, content: 'Ada wrote the first program.', label: 'bio' },
        }), 201);
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
        check('replaceThreadMessages', await call(svc, 'replaceThreadMessages', { key, params: tid, body: { messages } }), 200);
        check('getThread', await call(svc, 'getThread', { key, params: tid }), 200);
        check('syncThread', await call(svc, 'syncThread', { key, params: tid }), 200);
        check('createApiKey', await call(svc, 'createApiKey', { key, body: { name: 'ci' } }), 201);
        check('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key }), 200);
        const oauthStatus = plan === 'connect' ? 200 : 403;
        check('listOAuthConnections', await call(svc, 'listOAuthConnections', { key }), oauthStatus);
        check('authorizeOAuth', await call(svc, 'authorizeOAuth', { key, params: { provider: 'example' } }), oauthStatus);
        check('disconnectOAuth', await call(svc, 'disconnectOAuth', { key, params: { provider: 'example' } }), plan === 'connect' ? 404 : 403);
    });
    test('error paths answer {detail, code}', async () => {
        const key = svc.key(plan);
        for (const [name, route] of Object.entries(routes)) {
            if (name === 'oauthCallback')
                continue;
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
        check('editDocument', await call(svc, 'editDocument', { key, params: { document_id: 'doc_x' }, body: { label: 'y' } }), 404);
        check('syncDocument', await call(svc, 'syncDocument', { key, params: { document_id: 'doc_x' } }), 404);
        check('getThread', await call(svc, 'getThread', { key, params: { thread_id: 'thr_x' } }), 404);
        check('syncThread', await call(svc, 'syncThread', { key, params: { thread_id: 'thr_x' } }), 404);
        check('replaceThreadMessages', await call(svc, 'replaceThreadMessages', { key, params: { thread_id: 'thr_x' }, body: { messages: [] } }), 404);
        check('createFace', await call(svc, 'createFace', { key, body: { name: 'X', alias: 'Not A Slug' } }), 422);
        check('createFace', await call(svc, 'createFace', { key, body: { name: 'Ada', alias: `face-${plan}` } }), 409);
        check('createDocument', await call(svc, 'createDocument', { key, body: { alias: 'missing-face', content: 'x', label: 'y' } }), 404);
        check('createThread', await call(svc, 'createThread', { key, body: { alias: 'missing-face', label: 'y' } }), 404);
        check('importIntoFace', await call(svc, 'importIntoFace', { key, params: { face_id: 'missing-face' }, body: { url: 'https://x.test/' } }), 404);
        check('createApiKey', await call(svc, 'createApiKey', { key, body: { expires_in_days: 0 } }), 422);
        const oauthNotFound = plan === 'connect' ? 404 : 403;
        check('authorizeOAuth', await call(svc, 'authorizeOAuth', { key, params: { provider: 'other' } }), oauthNotFound);
        check('disconnectOAuth', await call(svc, 'disconnectOAuth', { key, params: { provider: 'other' } }), oauthNotFound);
    });
});
test('the OAuth callback answers HTML on its success and error paths', async () => {
    const key = svc.key('connect');
    const bad = await call(svc, 'oauthCallback', { params: { provider: 'example' } });
    check('oauthCallback', bad, 400);
    expect(bad.headers.get('content-type')).toMatch(/^text\/html/);
    expect(bad.body).toBeUndefined();
    const { body } = await call(svc, 'authorizeOAuth', { key, params: { provider: 'example' } });
    const consent = await request(svc.baseUrl, 'POST', new URL(body.authorize_url).pathname, {
        rawBody: new URLSearchParams({
            ...Object.fromEntries(new URL(body.authorize_url).searchParams),
            decision: 'approve',
        }).toString(),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(consent.status).toBe(302);
    const callback = new URL(consent.headers.get('location'));
    const ok = await request(svc.baseUrl, 'GET', `${callback.pathname}${callback.search}`);
    check('oauthCallback', ok, 200);
    expect(ok.text).toContain('Connected to example');
});
test('every route of the contract was exercised', () => {
    expect([...seen].sort()).toEqual(Object.keys(routes).sort());
});

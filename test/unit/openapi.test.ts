import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/main.js';
import { call, type Json, startTestService, type TestService } from '../helpers/service.js';
import { createTestContext } from '../helpers/test-context.js';

/**
 * `facectl openapi` says what the service answers: 201 for the POSTs that create something (the local
 * service's choice where the seed leaves success codes "not shown"), 200 for the rest, and the seed's
 * one stated error, 403 for Free and Standard plan users on the OAuth endpoints.
 */

let doc: Json;
let svc: TestService;

beforeAll(async () => {
  const tc = createTestContext();
  try {
    expect(await run(['openapi'], tc.ctx)).toBe(0);
    doc = JSON.parse(tc.stdout());
  } finally {
    await tc.close();
  }
  svc = await startTestService({
    fetchUrl: async (url) => ({ text: `Text from ${url}.`, finalUrl: url, contentType: 'text/plain' }),
  });
});
afterAll(() => svc.close());

const responses = (path: string, method: string) => doc.paths[path][method].responses as Record<string, Json>;
const CREATING = [
  ['/v1/auth/api-keys', 'post'],
  ['/v1/faces', 'post'],
  ['/v1/faces/{face_id}/import', 'post'],
  ['/v1/compile/documents', 'post'],
  ['/v1/compile/threads', 'post'],
] as const;

describe('facectl openapi', () => {
  it.each(CREATING)('%s %s lists 201 Created and no 200', (path, method) => {
    const answers = responses(path, method);
    expect(Object.keys(answers)).toContain('201');
    expect(Object.keys(answers)).not.toContain('200');
    expect(answers['201'].description).toBe('Created');
  });

  it('indented when read (a file, a terminal); one line under --json when piped, as every --json document', async () => {
    const plain = createTestContext();
    const piped = createTestContext();
    expect(await run(['openapi'], plain.ctx)).toBe(0);
    expect(await run(['openapi', '--json'], piped.ctx)).toBe(0);
    expect(plain.stdout().split('\n').length).toBeGreaterThan(100);
    expect(piped.stdout().split('\n')).toEqual([JSON.stringify(doc), '']);
  });

  it('every other operation lists 200', () => {
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, operation] of Object.entries(item)) {
        if (CREATING.some(([p, m]) => p === path && m === method)) continue;
        expect(Object.keys(operation.responses), `${method} ${path}`).toContain('200');
      }
    }
  });

  it('the service answers the status the document lists (201 on each creating POST)', async () => {
    const key = svc.key('pro');
    const face = await call(svc, 'createFace', { key, body: { name: 'Ada', alias: 'openapi-face' } });
    const statuses = [
      face.status,
      (await call(svc, 'createApiKey', { key, body: {} })).status,
      (
        await call(svc, 'importIntoFace', {
          key,
          params: { face_id: 'openapi-face' },
          body: { url: 'https://x.test/a' },
        })
      ).status,
      (await call(svc, 'createDocument', { key, body: { alias: 'openapi-face', content: 'x', label: 'l' } })).status,
      (await call(svc, 'createThread', { key, body: { alias: 'openapi-face', label: 'l' } })).status,
    ];
    expect(statuses).toEqual([201, 201, 201, 201, 201]);
    expect((await call(svc, 'getFace', { key, params: { face_id: 'openapi-face' } })).status).toBe(200);
  });

  it.each([
    ['/v1/oauth', 'get'],
    ['/v1/oauth/{provider}/authorize', 'get'],
    ['/v1/oauth/{provider}', 'delete'],
  ])('%s %s lists the 403 the seed states for Free and Standard plan users', (path, method) => {
    const forbidden = responses(path, method)['403'];
    expect(forbidden.description).toMatch(/Connect plan only/);
    expect(forbidden.content['application/json'].schema.properties).toHaveProperty('detail');
  });

  it('the service answers that 403 to Free and Standard plan users', async () => {
    for (const plan of ['free', 'standard'] as const) {
      const res = await call(svc, 'listOAuthConnections', { key: svc.key(plan) });
      expect(res.status).toBe(403);
    }
  });

  it('no other endpoint lists a 403 of its own (the seed states none)', () => {
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      if (path.startsWith('/v1/oauth')) continue;
      for (const operation of Object.values(item)) expect(Object.keys(operation.responses)).not.toContain('403');
    }
  });
});

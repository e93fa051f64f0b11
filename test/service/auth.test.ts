import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { call, createFace, expectContract, expectError, manualClock } from '../helpers/service.js';
import { createKey, useService, useTempFiles } from '../helpers/service-suite.js';

const clock = manualClock();
const tmp = useTempFiles('facectl-service-');
const svc = useService({ clock, dataFile: join(tmp.dir, 'state.json'), accessLog: true });

const newKey = (parent: string, body: object) => createKey(svc, parent, body);

describe('authentication (401 with WWW-Authenticate: Bearer)', () => {
  const cases: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['another scheme', { Authorization: 'Basic dXNlcjpwYXNz' }],
    ['an empty bearer', { Authorization: 'Bearer ' }],
    ['a short key', { Authorization: 'Bearer fcs_abc' }],
    ['a very long key', { Authorization: `Bearer fcs_${'x'.repeat(5000)}` }],
    ['a well-formed unknown key', { Authorization: `Bearer fcs_AAAAAAAA_${'B'.repeat(32)}` }],
  ];
  test.each(cases)('%s -> 401', async (_, headers) => {
    const res = await call(svc, 'getCurrentApiKey', { headers });
    expectError('getCurrentApiKey', res, 401, 'not_authenticated');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  test('case 35: a wrong key of another length, or with a right id and a wrong secret, is 401 not 500', async () => {
    const real = svc.key('free');
    for (const wrong of [`${real}x`, real.slice(0, -1), `${real.slice(0, -1)}${real.endsWith('A') ? 'B' : 'A'}`]) {
      expectError('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key: wrong }), 401, 'not_authenticated');
    }
    expectContract('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key: real }), 200);
  });

  test('case 36: a key expires with the (injected) clock', async () => {
    const child = await newKey(svc.key('standard'), { expires_in_days: 1 });
    expect(Date.parse(child.expires_at)).toBe(clock.now().getTime() + 86_400_000);
    expectContract('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key: child.key }), 200);
    clock.advance(86_400_000 - 1);
    expectContract('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key: child.key }), 200);
    clock.advance(1);
    const res = await call(svc, 'getCurrentApiKey', { key: child.key });
    expectError('getCurrentApiKey', res, 401, 'not_authenticated');
    expect(res.body.detail).toContain('expired');
  });
});

describe('scopes', () => {
  test('a key answers 403 insufficient_scope naming the scope a route needs', async () => {
    const readOnly = await newKey(svc.key('pro'), { scopes: ['v1:faces:read'] });
    await createFace(svc, svc.key('pro'), 'scoped-face');
    expectContract(
      'getFace',
      await call(svc, 'getFace', { key: readOnly.key, params: { face_id: 'scoped-face' } }),
      200,
    );
    const refused = await call(svc, 'createFace', { key: readOnly.key, body: { name: 'X', alias: 'other-face' } });
    expect(expectError('createFace', refused, 403, 'insufficient_scope').detail).toContain('v1:faces:write');
    expectError(
      'createApiKey',
      await call(svc, 'createApiKey', { key: readOnly.key, body: {} }),
      403,
      'insufficient_scope',
    );
    expectError(
      'createDocument',
      await call(svc, 'createDocument', {
        key: readOnly.key,
        body: { alias: 'scoped-face', content: 'x', label: 'y' },
      }),
      403,
      'insufficient_scope',
    );
    // No scope is needed to describe the key itself.
    expectContract('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key: readOnly.key }), 200);
  });

  test('v1:<area> grants both actions of the area and v1:* grants everything', async () => {
    await createFace(svc, svc.key('pro'), 'area-face');
    const compile = await newKey(svc.key('pro'), { scopes: ['v1:compile'] });
    const doc = await call(svc, 'createDocument', {
      key: compile.key,
      body: { alias: 'area-face', content: 'Some words.', label: 'x' },
    });
    expectContract('createDocument', doc, 201);
    expectContract(
      'getDocument',
      await call(svc, 'getDocument', { key: compile.key, params: { document_id: doc.body.document_id } }),
      200,
    );
    expectError(
      'getFace',
      await call(svc, 'getFace', { key: compile.key, params: { face_id: 'area-face' } }),
      403,
      'insufficient_scope',
    );
  });

  test('an unknown scope is a 422', async () => {
    const res = await call(svc, 'createApiKey', { key: svc.key('pro'), body: { scopes: ['v2:*'] } });
    expect(expectError('createApiKey', res, 422, 'validation_error').detail[0].loc).toEqual(['body', 'scopes', 0]);
  });
});

describe('child keys inherit and never widen', () => {
  test('omitted fields inherit the creating key; null counts as omitted', async () => {
    const parent = await newKey(svc.key('pro'), {
      scopes: ['v1:compile', 'v1:faces:read', 'v1:keys:write'],
      expires_in_days: 30,
      budget_usd: 2,
      allowed_face_ids: ['scoped-face'],
      allowed_llm_models: ['model-a'],
    });
    const child = await newKey(parent.key, { name: 'child', budget_usd: null });
    expect(child).toMatchObject({
      expires_at: parent.expires_at,
      budget_usd: 2,
      allowed_face_ids: ['scoped-face'],
      allowed_llm_models: ['model-a'],
      scopes: ['v1:compile', 'v1:faces:read', 'v1:keys:write'],
    });
    const narrower = await newKey(parent.key, { scopes: ['v1:compile:read'], expires_in_days: 1, budget_usd: 1 });
    expect(narrower.scopes).toEqual(['v1:compile:read']);
  });

  test.each([
    ['wider scopes', { scopes: ['v1:*'] }],
    ['another area', { scopes: ['v1:oauth'] }],
    ['a later expiry', { expires_in_days: 31 }],
    ['a larger budget', { budget_usd: 2.01 }],
    ['a face outside the list', { allowed_face_ids: ['scoped-face', 'another'] }],
    ['a model outside the list', { allowed_llm_models: ['model-b'] }],
  ])('%s -> 403 key_escalation', async (_, body) => {
    const parent = await newKey(svc.key('pro'), {
      scopes: ['v1:compile', 'v1:keys'],
      expires_in_days: 30,
      budget_usd: 2,
      allowed_face_ids: ['scoped-face'],
      allowed_llm_models: ['model-a'],
    });
    const before = svc.store.maps.keys.size;
    expectError('createApiKey', await call(svc, 'createApiKey', { key: parent.key, body }), 403, 'key_escalation');
    expect(svc.store.maps.keys.size).toBe(before);
  });
});

test('case 34: a secret appears only in its creation response, never later, in logs or in the data file', async () => {
  const created = await newKey(svc.key('connect'), { name: 'secret-check' });
  const secret: string = created.key;
  expect(secret).toMatch(/^fcs_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}$/);
  expect(created.key_prefix).toBe(secret.slice(0, 12));
  // Scopes default to v1:* (inherited from the bootstrap key); no expiry, no budget.
  expect(created).toMatchObject({ scopes: ['v1:*'], expires_at: null, budget_usd: null, spent_usd: 0 });
  const later = [
    await call(svc, 'getCurrentApiKey', { key: secret }),
    await call(svc, 'createApiKey', { key: secret, body: { name: 'grandchild' } }),
    await call(svc, 'listOAuthConnections', { key: secret }),
    await call(svc, 'createFace', { key: secret, body: { name: 'S', alias: 'secret-face' } }),
    await call(svc, 'getFace', { key: secret, params: { face_id: 'secret-face' } }),
    await call(svc, 'createApiKey', { key: secret, body: { scopes: ['v1:nope'] } }),
  ];
  for (const res of later) {
    expect(res.text).not.toContain(secret);
    expect(res.text).not.toContain(secret.slice(13));
    expect([...res.headers.values()].join('\n')).not.toContain(secret.slice(13));
  }
  expect(svc.logs.length).toBeGreaterThan(0);
  expect(svc.logs.join('\n')).not.toContain(secret.slice(13));

  // The database and its WAL, where every change goes first.
  expect(readdirSync(tmp.dir).sort()).toEqual(['state.json', 'state.json-wal']);
  const onDisk = readdirSync(tmp.dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'latin1'))
    .join('\n');
  expect(onDisk).toContain(created.id);
  for (const s of [secret, ...svc.users.map((u) => u.key)]) expect(onDisk).not.toContain(s.slice(13));
});

import { beforeEach, describe, expect, test } from 'vitest';
import { call, createFace, decideConsent, expectContract, expectError } from '../helpers/service.js';
import { manualClock, type Plan, textOfTokens } from '../helpers/service.js';
import { createKey, useService } from '../helpers/service-suite.js';

/** Billing at sync (local-service.md, "Billing source"; reliability.md cases 37 and 42). */

// A fresh service for each test, on a clock set back to the same start.
const clock = manualClock();
beforeEach(() => clock.set('2026-03-15T12:00:00.000Z'));
const svc = useService({ clock }, { each: true });

async function docOf(plan: Plan, tokens: number, key = svc.key(plan), alias = `face-${plan}`) {
  if (!svc.store.faceByAlias(svc.userId(plan), alias)) await createFace(svc, svc.key(plan), alias);
  const res = await call(svc, 'createDocument', { key, body: { alias, content: textOfTokens(tokens), label: 'd' } });
  const doc = expectContract('createDocument', res, 201);
  expect(doc.token_count).toBe(tokens);
  return doc.document_id as string;
}

const sync = (plan: Plan, id: string, key = svc.key(plan)) =>
  call(svc, 'syncDocument', { key, params: { document_id: id } });
const credits = (plan: Plan) => svc.store.get('users', svc.userId(plan))?.credits_micro;
/** Test seam: sets a balance directly, to spend credits without syncing megabytes. */
const setCredits = (plan: Plan, micro: number) => {
  const user = svc.store.get('users', svc.userId(plan));
  if (user) svc.store.put('users', { ...user, credits_micro: micro });
};
const current = async (key: string) =>
  expectContract('getCurrentApiKey', await call(svc, 'getCurrentApiKey', { key }), 200);

describe('case 42: billing falls back oauth -> compile quota -> credits -> 402', () => {
  test('standard: the quota while it covers the whole sync, then credits, then 402; a new month refills the quota', async () => {
    const startCredits = credits('standard') as number;
    const a = expectContract('syncDocument', await sync('standard', await docOf('standard', 70_000)), 200);
    expect(a).toMatchObject({ billing_source: 'compile', tokens_used: 70_000, tokens_limit: 100_000, synced: true });
    expect(credits('standard')).toBe(startCredits);

    // 30,000 tokens of quota left: a 40,000-token sync is paid from credits, whole.
    const b = expectContract('syncDocument', await sync('standard', await docOf('standard', 40_000)), 200);
    expect(b).toMatchObject({ billing_source: 'credits', tokens_used: 70_000 });
    expect(credits('standard')).toBe(startCredits - 40_000 * 2);

    const c = expectContract('syncDocument', await sync('standard', await docOf('standard', 10)), 200);
    expect(c).toMatchObject({ billing_source: 'compile', tokens_used: 70_010 });

    // Credits run out (test seam: spend them without syncing megabytes): 402, nothing charged.
    setCredits('standard', 1_000);
    const d = await docOf('standard', 40_000);
    expectError('syncDocument', await sync('standard', d), 402, 'insufficient_credits');
    expect(credits('standard')).toBe(1_000);
    const unsynced = expectContract(
      'getDocument',
      await call(svc, 'getDocument', { key: svc.key('standard'), params: { document_id: d } }),
      200,
    );
    expect(unsynced).toMatchObject({ synced: false, tokens_used: 70_010, prepare_status: null });

    clock.set('2026-04-01T00:00:00.000Z');
    const e = expectContract('syncDocument', await sync('standard', d), 200);
    expect(e).toMatchObject({ billing_source: 'compile', tokens_used: 40_000 });
  });

  test('free: credits until they cannot cover a sync, then 402 insufficient_credits', async () => {
    const first = expectContract('syncDocument', await sync('free', await docOf('free', 300_000)), 200);
    expect(first).toMatchObject({ billing_source: 'credits', tokens_used: 0, tokens_limit: 0 });
    expect(credits('free')).toBe(1_000_000 - 600_000);
    expectError('syncDocument', await sync('free', await docOf('free', 300_000)), 402, 'insufficient_credits');
    expect(credits('free')).toBe(400_000);
  });

  test('connect: oauth while connected (no credits used), credits after disconnect, then 402', async () => {
    const key = svc.key('connect');
    expect((await decideConsent(svc, key, 'approve')).callback.status).toBe(200);
    const viaOauth = expectContract('syncDocument', await sync('connect', await docOf('connect', 5_000)), 200);
    expect(viaOauth).toMatchObject({ billing_source: 'oauth', tokens_used: 0, tokens_limit: 0 });
    expect(credits('connect')).toBe(5_000_000);
    // Whatever the source, the cost counts against the key's spending.
    expect((await current(key)).spent_usd).toBeCloseTo(0.01, 10);

    expectContract(
      'disconnectOAuth',
      await call(svc, 'disconnectOAuth', { key, params: { provider: 'example' } }),
      200,
    );
    const viaCredits = expectContract('syncDocument', await sync('connect', await docOf('connect', 5_000)), 200);
    expect(viaCredits.billing_source).toBe('credits');
    expect(credits('connect')).toBe(5_000_000 - 10_000);

    setCredits('connect', 100);
    expectError('syncDocument', await sync('connect', await docOf('connect', 5_000)), 402, 'insufficient_credits');
  });
});

describe('interviewer_billing_source overrides', () => {
  const create = (plan: Plan, source: string) =>
    call(svc, 'createThread', {
      key: svc.key(plan),
      body: { alias: `face-${plan}`, label: 't', interviewer_billing_source: source },
    });

  test.each([
    ['free', 'oauth'],
    ['standard', 'oauth'],
    ['pro', 'oauth'],
    ['connect', 'oauth'],
    ['free', 'compile'],
    ['connect', 'compile'],
  ] as [Plan, string][])('%s with %s that cannot apply -> 409 at creation', async (plan, source) => {
    await createFace(svc, svc.key(plan), `face-${plan}`);
    const res = await create(plan, source);
    expect(expectError('createThread', res, 409, 'billing_source_unavailable').detail).toMatch(
      source === 'oauth' ? /Connect plan|connection/ : /quota/,
    );
    expect(svc.store.maps.threads.size).toBe(0);
  });

  test('an override is used at sync, and refused there when it cannot pay (402) or no longer applies (409)', async () => {
    await createFace(svc, svc.key('standard'), 'face-standard');
    const messages = [{ role: 'user', content: textOfTokens(60_000), from: 'Interviewer' }];
    const key = svc.key('standard');
    /** Creates a thread with the override, puts the messages in it and syncs it: the sync's answer. */
    const syncWith = async (source: string, check?: (thread: { interviewer_billing_source: string }) => void) => {
      const thread = expectContract('createThread', await create('standard', source), 201);
      check?.(thread);
      await call(svc, 'replaceThreadMessages', { key, params: { thread_id: thread.thread_id }, body: { messages } });
      return call(svc, 'syncThread', { key, params: { thread_id: thread.thread_id } });
    };

    const synced = expectContract(
      'syncThread',
      await syncWith('credits', (thread) => expect(thread.interviewer_billing_source).toBe('credits')),
      200,
    );
    expect(synced).toMatchObject({ interviewer_billing_source: 'credits', tokens_used: 0, synced: true });

    expect(expectContract('syncThread', await syncWith('compile'), 200).tokens_used).toBe(60_000);
    expectError('syncThread', await syncWith('compile'), 402, 'insufficient_quota');

    setCredits('standard', 0);
    expectError('syncThread', await syncWith('credits'), 402, 'insufficient_credits');
  });

  test('connect: an oauth override works while connected and is a 409 at sync after disconnecting', async () => {
    const key = svc.key('connect');
    await createFace(svc, key, 'face-connect');
    await decideConsent(svc, key, 'approve');
    const thread = expectContract('createThread', await create('connect', 'oauth'), 201);
    const tid = { thread_id: thread.thread_id };
    const messages = [{ role: 'user', content: 'Hello', from: 'Interviewer' }];
    await call(svc, 'replaceThreadMessages', { key, params: tid, body: { messages } });
    expect(
      expectContract('syncThread', await call(svc, 'syncThread', { key, params: tid }), 200).interviewer_billing_source,
    ).toBe('oauth');
    await call(svc, 'disconnectOAuth', { key, params: { provider: 'example' } });
    await call(svc, 'replaceThreadMessages', { key, params: tid, body: { messages } });
    expectError('syncThread', await call(svc, 'syncThread', { key, params: tid }), 409, 'billing_source_unavailable');
  });
});

describe('budgets', () => {
  test('case 37: parallel syncs that together pass a budget: exactly the affordable ones succeed', async () => {
    const tokens = 1_000;
    const costUsd = (tokens * 2) / 1_000_000;
    const child = await createKey(svc, svc.key('pro'), { budget_usd: costUsd * 7 });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await docOf('pro', tokens, child.key));
    const results = await Promise.all(ids.map((id) => sync('pro', id, child.key)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    expect(ok).toHaveLength(7);
    expect(refused).toHaveLength(13);
    for (const r of refused) expectError('syncDocument', r, 402, 'budget_exceeded');
    const after = await current(child.key);
    expect(after.spent_usd).toBeLessThanOrEqual(after.budget_usd);
    expect(after.spent_usd).toBeCloseTo(costUsd * 7, 10);
    // Nothing was taken from the quota for the refused ones.
    expect(svc.store.get('users', svc.userId('pro'))?.quota_used).toBe(7 * tokens);
  });

  test('a child key spends out of its parent budget too, so children never multiply a budget', async () => {
    const parent = await createKey(svc, svc.key('pro'), { budget_usd: 0.01 });
    const a = await createKey(svc, parent.key);
    const b = await createKey(svc, parent.key);
    expect(a.budget_usd).toBe(0.01);
    expect((await sync('pro', await docOf('pro', 4_000, a.key), a.key)).status).toBe(200);
    expectError('syncDocument', await sync('pro', await docOf('pro', 2_000, b.key), b.key), 402, 'budget_exceeded');
    expect((await sync('pro', await docOf('pro', 1_000, b.key), b.key)).status).toBe(200);
    expect((await current(parent.key)).spent_usd).toBeCloseTo(0.01, 10);
  });
});

describe('sync', () => {
  test('a synced, unedited document is returned free; an edit makes it chargeable again', async () => {
    const id = await docOf('standard', 1_000);
    await sync('standard', id);
    const again = expectContract('syncDocument', await sync('standard', id), 200);
    expect(again.tokens_used).toBe(1_000);
    const edited = expectContract(
      'editDocument',
      await call(svc, 'editDocument', {
        key: svc.key('standard'),
        params: { document_id: id },
        body: { content: textOfTokens(500) },
      }),
      200,
    );
    expect(edited).toMatchObject({ version: 2, synced: false, token_count: 500, prepare_status: null });
    expect(expectContract('syncDocument', await sync('standard', id), 200).tokens_used).toBe(1_500);
  });

  test('preparation runs queued -> processing -> ready on the clock, chunks of 1,000 tokens', async () => {
    const id = await docOf('pro', 2_500);
    const get = async () =>
      expectContract(
        'getDocument',
        await call(svc, 'getDocument', { key: svc.key('pro'), params: { document_id: id } }),
        200,
      );
    expect(await get()).toMatchObject({ prepare_status: null, chunks_total: null, chunks_completed: null });
    expect(expectContract('syncDocument', await sync('pro', id), 200)).toMatchObject({
      prepare_status: 'queued',
      chunks_total: 3,
      chunks_completed: 0,
    });
    clock.advance(200);
    expect(await get()).toMatchObject({ prepare_status: 'processing', chunks_completed: 0 });
    clock.advance(100);
    expect(await get()).toMatchObject({ prepare_status: 'processing', chunks_completed: 1 });
    clock.advance(200);
    expect(await get()).toMatchObject({ prepare_status: 'ready', chunks_completed: 3, chunks_total: 3 });
  });

  test('tokens_used / tokens_limit report the monthly compile quota per plan', async () => {
    const limits: Record<Plan, number> = { free: 0, standard: 100_000, pro: 1_000_000, connect: 0 };
    for (const plan of Object.keys(limits) as Plan[]) {
      const id = await docOf(plan, 10);
      const doc = expectContract('syncDocument', await sync(plan, id), 200);
      expect(doc.tokens_limit).toBe(limits[plan]);
      expect(doc.tokens_used).toBe(limits[plan] > 0 ? 10 : 0);
    }
  });
});

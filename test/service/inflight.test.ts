import { type ClientRequest, request as httpRequest } from 'node:http';
import { afterEach, expect, test } from 'vitest';
import {
  call,
  createFace,
  expectContract,
  expectError,
  startTestService,
  type TestService,
} from '../helpers/service.js';

/**
 * The in-flight budget (issue 21, finding 3: six 60 MiB documents at once took serve to 2 GiB): a
 * user's large bodies are taken one budget at a time; past it, 429 with Retry-After, read by the client
 * although it is still sending. Here with a budget of 1 MiB per user (2 MiB in all) and 800 KiB bodies.
 */

const KIB = 1024;
let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

const documentBody = (content: string) => JSON.stringify({ alias: 'big-face', label: 'big', content });

/** A POST of a document whose body is sent in two halves: the second when `finish` is called. */
function slowDocument(service: TestService, key: string, content: string) {
  const body = Buffer.from(documentBody(content));
  let req!: ClientRequest;
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req = httpRequest(
      `${service.baseUrl}/v1/compile/documents`,
      {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': body.length },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.write(body.subarray(0, body.length / 2));
  });
  return { answer, finish: () => req.end(body.subarray(body.length / 2)) };
}

const send = (service: TestService, key: string, content: string) =>
  call(service, 'createDocument', { key, rawBody: documentBody(content) });

test('past the user budget: 429 with Retry-After; small requests and other users go on; retried later: 201', async () => {
  svc = await startTestService({ inflightBytesPerUser: 1024 * KIB });
  const pro = svc.key('pro');
  for (const plan of ['pro', 'standard'] as const) await createFace(svc, svc.key(plan), 'big-face');
  const large = (letter: string) => `${letter.repeat(100)} `.repeat(8 * KIB);

  const before = svc.stats.requests;
  const first = slowDocument(svc, pro, large('a'));
  // Its headers are in: its body's bytes are reserved.
  await expect.poll(() => svc?.stats.requests).toBe(before + 1);

  const refused = await send(svc, pro, large('b'));
  const detail = expectError('createDocument', refused, 429, 'too_many_in_flight').detail as string;
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(detail).toMatch(/other large requests in flight .*send this one again in \d+ s/);

  expectContract('createDocument', await send(svc, pro, 'a small one beside it'), 201);
  expectContract('createDocument', await send(svc, svc.key('standard'), large('c')), 201);

  first.finish();
  expect((await first.answer).status).toBe(201);
  expectContract('createDocument', await send(svc, pro, large('b')), 201);
  expect(svc.store.count('documents')).toBe(4);
});

test('past the service budget: 503 service_busy with Retry-After', async () => {
  svc = await startTestService({ inflightBytesPerUser: 1024 * KIB });
  for (const plan of ['pro', 'standard', 'free'] as const) await createFace(svc, svc.key(plan), 'big-face');
  const large = `${'x'.repeat(100)} `.repeat(8 * KIB);
  const before = svc.stats.requests;
  const held = [slowDocument(svc, svc.key('pro'), large), slowDocument(svc, svc.key('standard'), large)];
  await expect.poll(() => svc?.stats.requests).toBe(before + 2);
  const refused = await send(svc, svc.key('free'), large);
  expectError('createDocument', refused, 503, 'service_busy');
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  for (const request of held) request.finish();
  for (const request of held) expect((await request.answer).status).toBe(201);
});

test('a client that gives up while its large request is counted leaves no share behind: the next one is taken', async () => {
  svc = await startTestService({ inflightBytesPerUser: 1024 * KIB });
  const pro = svc.key('pro');
  await createFace(svc, pro, 'big-face');
  // Letters and digits all unlike (as base64 is): counted for a good part of a second, off the event loop.
  const unlike = () =>
    Buffer.from(Array.from({ length: 560 * KIB }, () => Math.floor(Math.random() * 256))).toString('base64');
  const body = Buffer.from(documentBody(unlike()));
  await new Promise<void>((resolve, reject) => {
    const req = httpRequest(`${svc?.baseUrl}/v1/compile/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${pro}`, 'Content-Type': 'application/json', 'Content-Length': body.length },
    });
    req.on('error', () => resolve());
    req.on('response', () => reject(new Error('answered before the client gave up')));
    // The whole body sent, then the connection closed without waiting for the answer.
    req.end(body, () => setTimeout(() => req.destroy(), 50));
  });
  // The service finishes that request on its own (the document is made), then its share must be free.
  await expect.poll(() => svc?.store.count('documents'), { timeout: 20_000 }).toBe(1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  expectContract('createDocument', await send(svc, pro, unlike()), 201);
}, 40_000);

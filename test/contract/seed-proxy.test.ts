import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, manualClock, startTestService, type TestService } from '../helpers/service.js';
import { readSeed, type SeedField, type SeedTable } from './seed-tables.js';

/**
 * A scripted run of every endpoint of the local service over HTTP, through a proxy that validates each
 * request body and each JSON answer against a validator built from the seed's own tables (not from
 * the contract): every field's type, nullable, required and allowed values. Zero violations expected;
 * the number of checks made is counted so the run cannot pass by checking nothing.
 */

const seed = readSeed();
const table = (title: string): SeedTable => {
  const t = seed.tables.get(title);
  if (!t) throw new Error(`the seed has no table ${title}`);
  return t;
};

/** Which seed table an exchange is checked against. Extension routes answer the seed's shapes too. */
const SHAPES: { method: string; path: RegExp; request?: string; response?: string; array?: boolean }[] = [
  { method: 'GET', path: /^\/v1\/oauth$/, response: 'OAuth connection entry', array: true },
  { method: 'POST', path: /^\/v1\/auth\/api-keys$/, request: 'API key create request', response: 'API key' },
  { method: 'POST', path: /^\/v1\/faces$/, request: 'Face create request', response: 'Face' },
  { method: 'GET', path: /^\/v1\/faces\/[^/]+$/, response: 'Face' },
  { method: 'POST', path: /^\/v1\/faces\/[^/]+\/import$/, request: 'Import request', response: 'Document' },
  {
    method: 'POST',
    path: /^\/v1\/compile\/documents$/,
    request: 'Compile document create request',
    response: 'Document',
  },
  { method: 'GET', path: /^\/v1\/compile\/documents\/[^/]+$/, response: 'Document' },
  { method: 'PATCH', path: /^\/v1\/compile\/documents\/[^/]+$/, response: 'Document' },
  { method: 'POST', path: /^\/v1\/compile\/documents\/[^/]+\/sync$/, response: 'Document' },
  // The seed: response "not shown"; our choice is the Compile thread.
  {
    method: 'POST',
    path: /^\/v1\/compile\/threads$/,
    request: 'Compile thread create request',
    response: 'Compile thread',
  },
  { method: 'PATCH', path: /^\/v1\/compile\/threads\/[^/]+\/messages$/, response: 'Compile thread' },
  { method: 'GET', path: /^\/v1\/compile\/threads\/[^/]+$/, response: 'Compile thread' },
  { method: 'POST', path: /^\/v1\/compile\/threads\/[^/]+\/sync$/, response: 'Compile thread' },
];

const violations: string[] = [];
let checks = 0;
const seenRoutes = new Set<string>();

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

function checkValue(where: string, field: SeedField, value: unknown): void {
  checks++;
  if (value === null) {
    if (!field.nullable) violations.push(`${where}: null, but the seed does not type it nullable`);
    return;
  }
  const ok = {
    string: () => typeof value === 'string',
    integer: () => Number.isInteger(value),
    number: () => typeof value === 'number' && Number.isFinite(value),
    boolean: () => typeof value === 'boolean',
    'date-time': () => typeof value === 'string' && ISO.test(value) && !Number.isNaN(Date.parse(value)),
    object: () => typeof value === 'object' && !Array.isArray(value),
    array: () => Array.isArray(value),
  }[field.type]();
  if (!ok) {
    violations.push(`${where}: ${JSON.stringify(value)?.slice(0, 60)} is not ${field.type}`);
    return;
  }
  if (field.enum && !field.enum.includes(value as string)) {
    violations.push(`${where}: ${JSON.stringify(value)} is not one of ${field.enum.join(', ')}`);
  }
  if (field.type === 'array') {
    (value as unknown[]).forEach((item, i) => {
      if (field.items === 'string') checkValue(`${where}[${i}]`, { ...field, type: 'string', nullable: false }, item);
      else
        checkObject(
          `${where}[${i}]`,
          table(`Thread message (${where.includes('request') ? 'request' : 'response'})`),
          item,
        );
    });
  }
}

function checkObject(where: string, shape: SeedTable, value: unknown): void {
  checks++;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    violations.push(`${where}: not an object`);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const field of shape.fields) {
    if (!(field.name in record)) {
      checks++;
      if (field.required === true) violations.push(`${where}.${field.name}: required by the seed, missing`);
      continue;
    }
    checkValue(`${where}.${field.name}`, field, record[field.name]);
  }
  if (shape.title === 'Face' && record.component_counts) {
    for (const name of ['alpha', 'beta', 'delta', 'epsilon']) {
      checks++;
      const member = (record.component_counts as Record<string, unknown>)[name];
      if (member !== undefined && !Number.isInteger(member)) violations.push(`${where}.component_counts.${name}`);
    }
  }
}

function validate(method: string, path: string, status: number, requestBody: string, responseBody: string): void {
  const shape = SHAPES.find((s) => s.method === method && s.path.test(path));
  if (!shape) return;
  seenRoutes.add(`${method} ${shape.path.source}`);
  if (shape.request && requestBody !== '')
    checkObject(`request ${method} ${path}`, table(shape.request), JSON.parse(requestBody));
  if (status < 200 || status >= 300 || !shape.response) return;
  const body = JSON.parse(responseBody) as unknown;
  if (shape.array) {
    checks++;
    if (!Array.isArray(body)) violations.push(`${method} ${path}: not an array`);
    else body.forEach((item, i) => checkObject(`${method} ${path}[${i}]`, table(shape.response as string), item));
  } else checkObject(`${method} ${path}`, table(shape.response), body);
}

let svc: TestService;
let proxy: Server;
let proxyUrl: string;
const clock = manualClock();

beforeAll(async () => {
  svc = await startTestService({
    clock,
    fetchUrl: async (url) => ({ text: `Imported text from ${url}.`, finalUrl: url, contentType: 'text/plain' }),
  });
  const target = new URL(svc.baseUrl);
  proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const requestBody = Buffer.concat(chunks);
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      async (answer) => {
        const parts: Buffer[] = [];
        for await (const chunk of answer) parts.push(chunk as Buffer);
        const responseBody = Buffer.concat(parts);
        const path = (req.url ?? '').replace(/\?.*$/, '');
        if (String(answer.headers['content-type']).includes('json')) {
          validate(req.method ?? '', path, answer.statusCode ?? 0, requestBody.toString(), responseBody.toString());
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.end(responseBody);
      },
    );
    upstream.end(requestBody);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve));
  await svc.close();
});

describe('every endpoint through a validator built from the seed tables', () => {
  it('a scripted run of every endpoint: zero violations', async () => {
    const via = { baseUrl: proxyUrl };
    const ok = async (p: Promise<{ status: number; body: unknown; text: string }>) => {
      const res = await p;
      expect(res.status, res.text).toBeLessThan(300);
      return res.body as Record<string, string>;
    };
    for (const plan of ['pro', 'connect'] as const) {
      const key = svc.key(plan);
      const alias = `proxy-${plan}`;
      await ok(call(via, 'createApiKey', { key, body: {} }));
      await ok(
        call(via, 'createApiKey', {
          key,
          body: { name: 'ci', expires_in_days: 30, scopes: ['v1:*'], budget_usd: 5, allowed_face_ids: [alias] },
        }),
      );
      await ok(call(via, 'getCurrentApiKey', { key }));
      await ok(call(via, 'createFace', { key, body: { name: 'Ada', alias, basic_facts: { born: 1815 } } }));
      await ok(call(via, 'getFace', { key, params: { face_id: alias } }));
      await ok(call(via, 'importIntoFace', { key, params: { face_id: alias }, body: { url: 'https://x.test/a' } }));
      const doc = await ok(
        call(via, 'createDocument', { key, body: { alias, content: 'Ada wrote notes.', label: 'n' } }),
      );
      const docId = { document_id: doc.document_id as string };
      await ok(call(via, 'getDocument', { key, params: docId }));
      await ok(call(via, 'editDocument', { key, params: docId, body: { content: 'Ada wrote more notes.' } }));
      await ok(call(via, 'syncDocument', { key, params: docId }));
      clock.advance(150);
      await ok(call(via, 'getDocument', { key, params: docId }));
      clock.advance(10_000);
      await ok(call(via, 'getDocument', { key, params: docId }));
      const thr = await ok(call(via, 'createThread', { key, body: { alias, label: 'Interview' } }));
      const tid = { thread_id: thr.thread_id as string };
      await ok(call(via, 'getThread', { key, params: tid }));
      const messages = [
        { role: 'assistant', content: 'Where were you born?', from: 'Interviewer' },
        { role: 'user', content: 'In London.', from: 'Ada' },
      ];
      await ok(call(via, 'replaceThreadMessages', { key, params: tid, body: { messages } }));
      await ok(call(via, 'syncThread', { key, params: tid }));
      clock.advance(150);
      await ok(call(via, 'getThread', { key, params: tid }));
      clock.advance(10_000);
      await ok(call(via, 'getThread', { key, params: tid }));
    }
    // OAuth, Connect plan: list (not connected), authorize, consent, callback, list (connected), disconnect.
    const key = svc.key('connect');
    await ok(call(via, 'listOAuthConnections', { key }));
    const { authorize_url } = await ok(call(via, 'authorizeOAuth', { key, params: { provider: 'example' } }));
    const page = new URL(authorize_url as string);
    const form = new URLSearchParams(page.search);
    form.set('decision', 'approve');
    const posted = await fetch(new URL(page.pathname, page), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      redirect: 'manual',
    });
    const callback = new URL(posted.headers.get('location') as string, page);
    const landed = await fetch(`${proxyUrl}${callback.pathname}${callback.search}`);
    expect(await landed.text()).toContain('Connected to example');
    await ok(call(via, 'listOAuthConnections', { key }));
    await ok(call(via, 'disconnectOAuth', { key, params: { provider: 'example' } }));
    await ok(call(via, 'listOAuthConnections', { key }));

    expect(violations).toEqual([]);
    expect(seenRoutes.size).toBe(SHAPES.length);
    expect(checks).toBeGreaterThan(500);
    process.stdout.write(`seed proxy: ${checks} checks, ${violations.length} violations, ${seenRoutes.size} routes\n`);
  });
});

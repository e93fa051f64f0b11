import { describe, expect, it } from 'vitest';
import { keepJsonKeys } from '../../src/contract/json-keys.js';
import { face } from '../../src/contract/index.js';
import { useFaultServer } from '../helpers/hooks.js';
import { useService } from '../helpers/service-suite.js';
import { request } from '../helpers/service.js';
import { runIn } from './support.js';

/**
 * Case 55: `__proto__`, `constructor` and `prototype` keys in any JSON object sent or received are kept
 * as data or refused with a message; never dropped silently, and never change an object's prototype.
 */

const FACTS = '{"__proto__":{"polluted":true},"constructor":"c","prototype":{"p":1},"born":1815}';
const ownKeys = (value: unknown) => Object.keys(value as object).sort();

const svc = useService({}, { each: true });
const fault = useFaultServer();

describe('case 55: __proto__, constructor, prototype as JSON keys', () => {
  it('keepJsonKeys: what zod drops comes back as an own key, and the prototype stays ordinary', () => {
    const input = JSON.parse(`{"alias":"a","created":1,"owned_by":"u","__proto__":{"x":1},"basic_facts":${FACTS}}`);
    const parsed = face.parse(input);
    const kept = keepJsonKeys(input, parsed);
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(kept.basic_facts)).toBe(Object.prototype);
    expect(ownKeys(kept)).toContain('__proto__');
    expect(ownKeys(kept.basic_facts)).toEqual(['__proto__', 'born', 'constructor', 'prototype']);
    expect(JSON.parse(JSON.stringify(kept)).basic_facts).toEqual(JSON.parse(FACTS));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('faces create --basic-facts with those keys: sent, stored and answered with all of them', async () => {
    const result = await runIn(
      svc,
      ['faces', 'create', '--name', 'Ada', '--alias', 'proto-keys', '--basic-facts', FACTS, '--json', '--no-input'],
      { apiKey: svc.key('pro') },
    );
    expect(result.code, result.stderr).toBe(0);
    // What the CLI printed (the service's answer, through the client's contract check).
    const printed = JSON.parse(result.stdout);
    expect(ownKeys(printed.basic_facts)).toEqual(['__proto__', 'born', 'constructor', 'prototype']);
    expect(JSON.stringify(printed.basic_facts)).toContain('"__proto__":{"polluted":true}');
    // What the service stored: read back raw over HTTP.
    const stored = await request(svc.baseUrl, 'GET', '/v1/faces/proto-keys', { key: svc.key('pro') });
    expect(stored.text).toContain('"__proto__":{"polluted":true}');
    expect(JSON.parse(stored.text).basic_facts).toEqual(JSON.parse(FACTS));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a response with those keys at the top and inside: read and printed with all of them', async () => {
    fault.handle((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        `{"alias":"ada","created":1,"owned_by":"u","__proto__":{"admin":true},"constructor":1,"prototype":2,"basic_facts":${FACTS}}`,
      );
    });
    const result = await runIn(fault, ['faces', 'get', 'ada', '--json', '--no-input'], { apiKey: 'fcs_any' });
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(ownKeys(printed)).toEqual(expect.arrayContaining(['__proto__', 'constructor', 'prototype']));
    expect(printed.__proto__).toEqual({ admin: true });
    expect(ownKeys(printed.basic_facts)).toEqual(['__proto__', 'born', 'constructor', 'prototype']);
  });

  it('at the top of a request body facectl serve checks strictly: refused with 422 naming the key', async () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const res = await request(svc.baseUrl, 'POST', '/v1/faces', {
        key: svc.key('pro'),
        rawBody: `{"name":"Ada","alias":"strict-${key.replace(/_/g, '')}","${key}":{"x":1}}`,
      });
      expect(res.status, res.text).toBe(422);
      expect(res.text).toContain(key);
    }
    expect(svc.store.maps.faces.size).toBe(0);
  });

  it('a docs submit JSON document with a __proto__ key: refused before sending, naming it', async () => {
    const before = svc.stats.requests;
    const result = await runIn(svc, ['docs', 'submit', '--format', 'json', '-', '--no-input'], {
      apiKey: svc.key('pro'),
      stdin: '{"alias":"ada-lovelace","label":"l","content":"x","__proto__":{"x":1}}',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('__proto__');
    expect(svc.stats.requests).toBe(before);
  });

  it('a key stays data through the service validator too (a message with a __proto__ field is refused, named)', async () => {
    await request(svc.baseUrl, 'POST', '/v1/faces', { key: svc.key('pro'), body: { name: 'Ada', alias: 'msg-face' } });
    const thread = await request(svc.baseUrl, 'POST', '/v1/compile/threads', {
      key: svc.key('pro'),
      body: { alias: 'msg-face', label: 'l' },
    });
    const res = await request(svc.baseUrl, 'PATCH', `/v1/compile/threads/${thread.body.thread_id}/messages`, {
      key: svc.key('pro'),
      rawBody: '{"messages":[{"role":"user","content":"x","from":"a","__proto__":{"y":1}}]}',
    });
    expect(res.status).toBe(422);
    expect(res.text).toContain('__proto__');
  });
});

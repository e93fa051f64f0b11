import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { errorBody, type RouteName, routes } from '../../src/contract/index.js';
import { buildPath } from '../../src/contract/route.js';
import { type RunningService, type ServiceOptions, startService } from '../../src/service/index.js';
import { Store } from '../../src/service/store.js';

/**
 * The local service started in-process on 127.0.0.1, port 0, for tests, plus a small JSON request
 * helper (global fetch) and a clock tests move by hand.
 */

export type Plan = 'free' | 'standard' | 'pro' | 'connect';

export interface TestService extends RunningService {
  key(plan: Plan): string;
  userId(plan: Plan): string;
  /** Lines the service logged. */
  logs: string[];
}

export async function startTestService(options: ServiceOptions = {}): Promise<TestService> {
  const logs: string[] = [];
  const service = await startService({ log: (line) => logs.push(line), ...options });
  const find = (plan: Plan) => {
    const user = service.users.find((u) => u.plan === plan);
    if (!user) throw new Error(`no ${plan} user`);
    return user;
  };
  return Object.assign(service, {
    key: (plan: Plan) => find(plan).key,
    userId: (plan: Plan) => find(plan).user_id,
    logs,
  });
}

/** A clock that moves only when told. */
export interface ManualClock {
  now(): Date;
  advance(ms: number): void;
  set(iso: string): void;
}

export function manualClock(start = '2026-03-15T12:00:00.000Z'): ManualClock {
  let ms = Date.parse(start);
  return {
    now: () => new Date(ms),
    advance: (delta) => {
      ms += delta;
    },
    set: (iso) => {
      ms = Date.parse(iso);
    },
  };
}

/** A parsed JSON body; tests read it loosely (the contract schemas have checked its shape). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions walk response bodies freely
export type Json = any;

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON, or undefined when the body is not JSON. */
  body: Json;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as is instead of JSON-encoding `body`. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  redirect?: 'manual' | 'follow';
}

export async function request(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.Authorization = `Bearer ${options.key}`;
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !headers['Content-Type']) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body,
    redirect: options.redirect ?? 'manual',
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** Calls a contract route by name, filling its path template. */
export function call(
  service: { baseUrl: string },
  name: RouteName,
  options: RequestOptions & { params?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const route = routes[name];
  return request(service.baseUrl, route.method, buildPath(route.path, options.params ?? {}), options);
}

/**
 * Asserts the response follows the contract: a 2xx body parses with the route's response schema, an
 * error body with the error schema (`{detail, code}`). Returns the parsed body.
 */
export function expectContract(name: RouteName, res: ApiResponse, status?: number): Json {
  if (status !== undefined) expect(res.status, res.text).toBe(status);
  const route = routes[name];
  if (res.status >= 200 && res.status < 300) {
    if (route.responseKind === 'html') {
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      return route.response.parse(res.text);
    }
    const parsed = route.response.safeParse(res.body);
    expect(parsed.error, `${name} answered a body its contract refuses: ${res.text.slice(0, 500)}`).toBeUndefined();
    return parsed.data;
  }
  if (route.responseKind === 'html') return res.text;
  const parsed = errorBody.safeParse(res.body);
  expect(
    parsed.error,
    `${name} answered an error body outside {detail, code}: ${res.text.slice(0, 500)}`,
  ).toBeUndefined();
  return parsed.data;
}

/** Asserts an error status and code, and that the body is `{detail, code}`. */
export function expectError(name: RouteName, res: ApiResponse, status: number, code: string): Json {
  const body = expectContract(name, res, status);
  expect(body.code, res.text).toBe(code);
  return body;
}

/** A fresh temp directory, removed by the returned cleanup. */
export function tempDir(prefix = 'facectl-service-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The aliases of the faces a `--data` file holds (read with the database closed by its serve). */
export function storedAliases(file: string): string[] {
  const store = Store.open(file);
  try {
    return [...store.values('faces')].map((face) => face.alias).sort();
  } finally {
    store.close();
  }
}

/** Creates a face for `key` and returns its body. */
export async function createFace(service: { baseUrl: string }, key: string, alias: string, extra: object = {}) {
  const res = await call(service, 'createFace', { key, body: { name: `Face ${alias}`, alias, ...extra } });
  return expectContract('createFace', res, 201);
}

export async function createDocument(service: { baseUrl: string }, key: string, alias: string, content: string) {
  const res = await call(service, 'createDocument', { key, body: { alias, content, label: 'notes' } });
  return expectContract('createDocument', res, 201);
}

const WORDS = ['apple', 'river', 'stone', 'cloud', 'green', 'music', 'paper', 'light', 'table', 'horse'];
/** Text of exactly `n` o200k_base tokens (each of these words with its space is one token). */
export function textOfTokens(n: number): string {
  return Array.from({ length: n }, (_, i) => WORDS[(i * 7) % 10]).join(' ');
}

/**
 * Runs the OAuth flow over plain HTTP, as a browser would: authorize, POST the consent form with the
 * decision, follow the redirect to the callback. Returns the callback's response and its URL.
 */
export async function decideConsent(
  service: { baseUrl: string },
  key: string,
  decision: 'approve' | 'deny',
): Promise<{ callback: ApiResponse; callbackUrl: URL }> {
  const authorize = await call(service, 'authorizeOAuth', { key, params: { provider: 'example' } });
  expect(authorize.status, authorize.text).toBe(200);
  const url = new URL(authorize.body.authorize_url);
  const consent = await request(service.baseUrl, 'POST', url.pathname, {
    rawBody: new URLSearchParams({ ...Object.fromEntries(url.searchParams), decision }).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  expect(consent.status, consent.text).toBe(302);
  const callbackUrl = new URL(consent.headers.get('location') as string);
  const callback = await request(service.baseUrl, 'GET', `${callbackUrl.pathname}${callbackUrl.search}`);
  return { callback, callbackUrl };
}

import { systemClock } from '../clock.js';
import { type ApiClient, type CallOptions, checkBaseUrl, type RawRequest, type RawResponse } from './types.js';
import { safeParseJson } from '../contract/json-keys.js';
import { type AnyRoute, type BodyOf, buildPath, type ParamsOf } from '../contract/route.js';
import { type AnswerOf, fieldPath, issueText, readAnswer, schemaAt, valueAt } from './answers.js';

export { readAnswer };
import { VERSION } from '../version.js';
import type { KeySource } from '../context.js';
import { AuthError, type FieldProblem, ResponseError, UsageError } from '../errors.js';
import { type ExchangeInfo, errorFromResponse, isLoopbackHost } from './error-mapping.js';
import { type ExchangeResult, NEVER_ABORTED, saysJson, Transport, type TransportOptions } from './transport.js';

/**
 * The only path to the network. Every call names a contract route: the request is validated before
 * anything is sent, the key goes only to the configured base URL, the answer is read as answers.ts says.
 */

export interface ApiClientOptions extends Partial<Omit<TransportOptions, 'baseUrl' | 'secrets'>> {
  baseUrl: string;
  /** The key, or a function resolving it (and its source) on the first call needing one (stdin is read only then). */
  apiKey?: string | (() => Promise<{ key: string; source: KeySource } | undefined>);
  /** Allow plain http to hosts other than loopback (the key would cross the network unencrypted). */
  insecureHttp?: boolean;
  /** Said when a call needs a key and there is none (names where keys are looked for). */
  noKeyMessage?: string;
  userAgent?: string;
}

/** A request the contract refuses, before anything is sent: `issues` are printed one a line, as a 422's. */
export class RequestValidationError extends UsageError {
  constructor(
    message: string,
    readonly issues: FieldProblem[],
  ) {
    super(message, {
      code: 'invalid_request',
      fields: issues,
      ...(issues.length > 0 ? { hint: 'fix the values listed above and run the command again' } : {}),
    });
  }
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = parseBaseUrl(options.baseUrl, options.insecureHttp ?? false);
  const baseUrl = base.href.replace(/\/$/, '');
  const basePath = base.pathname.replace(/\/$/, '');
  let resolvedKey: string | undefined;
  const { apiKey, noKeyMessage } = options;
  const transport = new Transport({
    ...options,
    baseUrl: base,
    env: options.env ?? {},
    sleep: options.sleep ?? systemClock.sleep,
    secrets: () => (resolvedKey ? [resolvedKey] : []),
  });
  const userAgent = options.userAgent ?? `facectl/${VERSION} node/${process.versions.node}`;

  // Its source goes into the call's info: a 401 says where a new key goes.
  const keyFor = async (info: ExchangeInfo): Promise<string> => {
    const found = typeof apiKey === 'function' ? await apiKey() : apiKey ? { key: apiKey } : undefined;
    if (!found) throw new AuthError(noKeyMessage ?? `not logged in: no API key for ${info.method} ${info.path}`);
    if ('source' in found) info.keySource = found.source;
    resolvedKey = found.key;
    return found.key;
  };
  // The client's own signal, when the call brings none other: the transport aborts every request in
  // flight when it fires, without a listener per request. A call's own signal is combined with it.
  const signalFor = (signal?: AbortSignal) => {
    if (signal === undefined || signal === options.signal) return options.signal ?? NEVER_ABORTED;
    return options.signal === undefined ? signal : AbortSignal.any([options.signal, signal]);
  };

  return {
    baseUrl,
    async call<R extends AnyRoute>(
      route: R,
      input: { params?: ParamsOf<R>; body?: BodyOf<R> },
      callOptions: CallOptions = {},
    ): Promise<AnswerOf<R>> {
      const info: ExchangeInfo = { method: route.method, path: route.path, baseUrl };
      // The caller's own Idempotency-Key (a batch's line): sent again with it, as --resume does, nothing is made twice.
      if (callOptions.idempotencyKey !== undefined) info.keyed = true;
      // A route's params are its path's (route.ts): a path without any has none to check.
      const params = (
        input.params === undefined && !route.path.includes('{')
          ? {}
          : validateRequest(route, 'params', route.params, input.params ?? {})
      ) as Record<string, unknown>;
      // A pre-serialized body (rawBody) is checked by the parsed form it was made from (input.body).
      let body: string | CallOptions['rawBody'] | undefined;
      if (route.body) {
        const checked = callOptions.bodyChecked ? input.body : validateRequest(route, 'body', route.body, input.body);
        body = callOptions.rawBody ?? serialized(checked, info);
      } else if (callOptions.rawBody !== undefined) {
        throw new RequestValidationError(`${route.method} ${route.path} takes no request body`, []);
      }
      const headers: Record<string, string> = {
        accept: route.responseKind === 'html' ? 'text/html' : 'application/json',
        'user-agent': userAgent,
      };
      if (body !== undefined) headers['content-type'] = 'application/json';
      // The browser's OAuth callback authenticates by its single-use state, not a key.
      if (route.name !== 'oauthCallback') headers.authorization = `Bearer ${await keyFor(info)}`;
      const idempotencyKey = route.idempotent ? (callOptions.idempotencyKey ?? newIdempotencyKey()) : undefined;
      if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
      const result = await transport.send({
        method: route.method,
        path: `${basePath}${buildPath(route.path, params)}`,
        headers,
        ...(body === undefined ? {} : { body }),
        repeatable: route.method === 'GET' || route.method === 'DELETE' || idempotencyKey !== undefined,
        signal: signalFor(callOptions.signal),
        info,
        ...(callOptions.largeStrings ? { largeStrings: callOptions.largeStrings } : {}),
        ...(callOptions.gate ? { gate: callOptions.gate } : {}),
      });
      refuseUnless2xx(result, info);
      const where = `${route.method} ${route.path}`;
      const { text } = result;
      const contentType = String(result.headers['content-type'] ?? '(none)');
      if (route.responseKind === 'html') {
        if (!contentType.includes('text/html')) throw unexpected(where, contentType, text, 'HTML');
        return text as AnswerOf<R>;
      }
      if (!saysJson(result.headers)) throw unexpected(where, contentType, text, 'JSON');
      if (result.json?.ok === false)
        throw unexpected(where, contentType, result.json.head.toString('utf8'), 'valid JSON');
      let json = result.json?.value;
      if (result.json === undefined) {
        try {
          json = JSON.parse(text);
        } catch {
          throw unexpected(where, contentType, text, 'valid JSON');
        }
      }
      return (await readAnswer(route, json, options.debug, callOptions.neededOnly)) as AnswerOf<R>;
    },
    async request(raw: RawRequest): Promise<RawResponse> {
      const method = raw.method.toUpperCase();
      if (!raw.path.startsWith('/')) throw new UsageError(`the path must start with /: ${raw.path}`);
      const info: ExchangeInfo = { method, path: raw.path.replace(/\?.*$/, ''), baseUrl, outsideContract: true };
      const own = raw.headers ?? {};
      const body = raw.bodyText ?? (raw.body === undefined ? undefined : JSON.stringify(raw.body));
      const headers: Record<string, string> = { accept: 'application/json', 'user-agent': userAgent };
      // A caller's own Authorization header replaces the stored key, which is then not even looked up.
      if (own.authorization === undefined) headers.authorization = `Bearer ${await keyFor(info)}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      Object.assign(headers, own);
      const result = await transport.send({
        method,
        path: `${basePath}${raw.path}`,
        headers,
        ...(body === undefined ? {} : { body }),
        repeatable: ['GET', 'HEAD', 'DELETE'].includes(method) || headers['idempotency-key'] !== undefined,
        signal: signalFor(raw.signal),
        info,
      });
      if (!raw.anyStatus) refuseUnless2xx(result, info);
      return {
        status: result.status,
        ...(result.statusText ? { statusText: result.statusText } : {}),
        headers: result.headers,
        body: parseJsonLoosely(result.text, result.headers),
      };
    },
    close: () => transport.close(),
  };
}

/** Validates a base URL and the rule that a key never crosses a network over plain http. */
export function parseBaseUrl(value: string, insecureHttp: boolean): URL {
  const url = checkBaseUrl(value);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !insecureHttp) {
    throw new UsageError(`refusing to send the API key over plain http to ${url.host}`, {
      code: 'insecure_http',
      hint: 'use an https:// base URL, or pass --insecure-http if you accept the risk',
    });
  }
  return url;
}

/** Throws for an answer but 2xx: an error answer as the service's error, any other as notAnAnswer. */
function refuseUnless2xx(result: ExchangeResult, info: ExchangeInfo): void {
  const { status, headers, retryAfterSeconds } = result;
  if (status >= 400) throw errorFromResponse(status, parseJsonLoosely(result.text, headers), info, retryAfterSeconds);
  if (status < 200 || status >= 300) throw notAnAnswer(result, `${info.method} ${info.path}`);
}

/** A 3xx (or another non-2xx non-error): no redirect is followed, as a key must go only where pointed. */
export function notAnAnswer(result: Pick<ExchangeResult, 'status' | 'headers'>, where: string): ResponseError {
  const location = result.headers.location;
  const to = Array.isArray(location) ? location[0] : location;
  return new ResponseError(
    `unexpected response from ${where}: status ${result.status}${to ? ` redirecting to ${to}` : ''}`,
    {
      code: 'redirect',
      hint: 'facectl follows no redirects: point --base-url at the service itself (the address it redirects to, if you trust it)',
    },
  );
}

export function validateRequest(route: AnyRoute, part: 'params' | 'body', schema: AnyRoute['params'], value: unknown) {
  let result: ReturnType<typeof safeParseJson>;
  try {
    result = safeParseJson(schema, value);
  } catch (error) {
    // The check walks the value as deep as it goes (3,000 levels run the stack out).
    if (error instanceof RangeError) throw tooDeep(route.method, route.path, 'checked');
    throw error;
  }
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    field: issue.path.length > 0 ? fieldPath(issue.path) : part,
    message: issueText(issue, valueAt(value, issue.path), schemaAt(schema, issue.path)),
  }));
  const fields = [...new Set(issues.map((i) => i.field))].join(', ');
  throw new RequestValidationError(`invalid ${part} for ${route.method} ${route.path}: ${fields}`, issues);
}

function unexpected(where: string, contentType: string, text: string, expected: string): ResponseError {
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 120);
  return new ResponseError(
    `unexpected response from ${where}: expected ${expected}, got content type ${contentType}: ${snippet || '(empty body)'}`,
    {
      hint: 'check --base-url: it should point at the Face Compilation Service (run with --debug to see the exchange)',
    },
  );
}

function parseJsonLoosely(text: string, headers: ExchangeResult['headers']): unknown {
  if (!saysJson(headers)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** node:crypto is taken only when a creating request needs a key: a GET command never loads it. */
const newIdempotencyKey = (): string => process.getBuiltinModule('node:crypto').randomUUID();

/** JSON.stringify recurses, JSON.parse does not: a body thousands of levels deep parses, then runs the stack out. */
function serialized(value: unknown, info: ExchangeInfo): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw tooDeep(info.method, info.path, 'written as JSON');
  }
}

function tooDeep(method: string, path: string, what: string): UsageError {
  return new UsageError(`${method} ${path}: the request body is nested too deeply to be ${what}`, {
    code: 'too_deep',
    hint: 'give JSON with fewer levels of nesting; nothing was sent',
  });
}

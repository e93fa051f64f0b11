import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type RouteName, routes } from '../contract/index.js';
import { type AnyRoute, matchPath } from '../contract/route.js';
import { type AuthInfo, authenticate, requireScope } from './auth.js';
import { HttpError } from './errors.js';
import { handlers } from './handlers/index.js';
import { PUBLIC_ROUTES } from './handlers/types.js';
import { ClientGone, JSON_HEADERS, jsonReply, parseJsonBody, type Reply, readBody, validate } from './http-util.js';
import { Idempotency, serializeBody } from './idempotency.js';
import { PAGE_HEADERS, resultPage } from './oauth-pages.js';
import { isProviderPath, providerPage } from './provider-page.js';
import type { RateLimiter } from './rate-limit.js';
import type { ServiceCore } from './service-core.js';

/**
 * The HTTP layer: routing over the contract's routes, then for each request, in this order: the key
 * (401), the rate limit (429), the scope (403), the body (413, 400 `invalid_json`), validation with
 * the route's schemas (422), idempotency, the handler, and the journal write, all before answering.
 */

export interface ServerDeps {
  svc: ServiceCore;
  idempotency: Idempotency;
  rateLimiter: RateLimiter | null;
  maxBodyBytes: number;
  /** One line per request (method, path without query, status, time); never headers or bodies. */
  accessLog: boolean;
  /** True once close() began: answers carry Connection: close. */
  closing: () => boolean;
}

type GenericHandler = (input: unknown) => Promise<{ status: number; body: unknown; holdsSecret?: boolean }>;

/**
 * The routes with their path patterns compiled once (contract's matchPath compiles on every call).
 * A cheap regular expression picks the candidates; matchPath then decodes their parameters.
 */
const ROUTE_LIST = (Object.entries(routes) as [RouteName, AnyRoute][]).map(([name, route]) => ({
  name,
  route,
  pattern: new RegExp(`^${route.path.replace(/\{[a-z_]+\}/g, '[^/]+')}$`),
  // A path without parameters matched its pattern exactly: there is nothing to decode.
  static: !route.path.includes('{'),
}));

function findRoute(method: string, pathname: string) {
  const allowed: string[] = [];
  for (const { name, route, pattern, static: exact } of ROUTE_LIST) {
    if (!pattern.test(pathname)) continue;
    const params = exact ? {} : matchPath(route.path, pathname);
    if (!params) continue;
    if (route.method === method) return { name, route, params };
    allowed.push(route.method);
  }
  if (allowed.length > 0) {
    throw new HttpError(405, 'method_not_allowed', `${method} is not allowed on ${pathname}`, {
      Allow: allowed.join(', '),
    });
  }
  throw new HttpError(404, 'not_found', `no endpoint ${method} ${pathname}`);
}

export function createRequestHandler(deps: ServerDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return (req, res) => handleRequest(deps, req, res);
}

async function handleRequest(deps: ServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // The request's own view of the store: a request whose answer fails leaves nothing stored.
  const changes = deps.svc.store.scoped();
  const svc: ServiceCore = { ...deps.svc, store: changes.store };
  const started = performance.now();
  svc.stats.requests++;
  let html = false;
  let reply: Reply;
  let pathname = '?';
  try {
    const url = requestTarget(req.url);
    pathname = url.pathname;
    if (isProviderPath(pathname)) {
      html = true;
      count(svc, 'page');
      reply = await providerPage(svc, req, pathname, url.searchParams);
    } else {
      reply = await handleApi({ ...deps, svc }, req, url, (isHtml) => {
        html = isHtml;
      });
    }
  } catch (error) {
    // An answer that could not be produced (a failure, not a refusal): its changes are undone.
    if (!(error instanceof HttpError)) changes.rollback();
    if (error instanceof ClientGone) return;
    reply = errorReply(svc, error, html);
  }
  try {
    const written = svc.store.commit(svc.clock.now());
    if (written) await written;
  } catch (error) {
    changes.rollback();
    svc.log(`could not save state: ${(error as Error).message}`);
    reply = errorReply(svc, new HttpError(500, 'storage_error', 'the change could not be saved'), html);
  }
  send(req, res, reply, deps.closing());
  if (deps.accessLog) {
    svc.log(`${req.method} ${pathname} ${reply.status} ${(performance.now() - started).toFixed(1)}ms`, 'debug');
  }
}

/** A request's path and query. */
interface Target {
  pathname: string;
  searchParams: URLSearchParams;
}

/**
 * Paths of plain letters, digits, `_`, `-` and single slashes (every API path a client builds) are
 * already what the URL parser would give, and have no query: they skip it.
 */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_-]+)+$/;

function requestTarget(raw: string | undefined): Target {
  if (raw !== undefined && PLAIN_PATH.test(raw)) return { pathname: raw, searchParams: new URLSearchParams() };
  return new URL(raw ?? '/', 'http://service.invalid');
}

async function handleApi(
  deps: ServerDeps,
  req: IncomingMessage,
  url: Target,
  setHtml: (html: boolean) => void,
): Promise<Reply> {
  const { svc } = deps;
  const method = req.method ?? 'GET';
  let match: ReturnType<typeof findRoute>;
  try {
    match = findRoute(method, url.pathname);
  } catch (error) {
    count(svc, 'unmatched');
    throw error;
  }
  const { name, route } = match;
  count(svc, name);
  setHtml(route.responseKind === 'html');

  let auth: AuthInfo | null = null;
  if (!PUBLIC_ROUTES.has(name)) {
    auth = authenticate(svc.store, req.headers.authorization, svc.clock.now());
    const wait = deps.rateLimiter?.take(auth.key.id);
    if (wait != null) {
      throw new HttpError(429, 'rate_limited', `too many requests for this key; retry in ${wait} s`, {
        'Retry-After': String(wait),
      });
    }
    requireScope(auth, route);
  }

  const raw = await readBody(req, deps.maxBodyBytes);
  const params = validate(route.params, match.params, 'path');
  // The service checks its own rules (serviceBody) where it has them, else what the seed states.
  const bodySchema = route.serviceBody ?? route.body;
  const body = bodySchema ? validate(bodySchema, parseJsonBody(raw), 'body') : undefined;
  const handler = handlers[name] as unknown as GenericHandler;
  const idempotencyKey = req.headers['idempotency-key'];
  const idempotent = method === 'POST' && auth !== null && typeof idempotencyKey === 'string';
  const execute = async () => {
    const result = await handler({ params, body, auth, query: url.searchParams, svc });
    const holdsSecret = result.holdsSecret === true;
    if (route.responseKind === 'html') return { status: result.status, body: String(result.body), holdsSecret };
    // Serialized once; under an Idempotency-Key a document's body also gives its parts around the content.
    const { text, docRef, content } = serializeBody(result.body, idempotent);
    if (content) svc.store.noteJson(content.value, content.json);
    return { status: result.status, body: text, holdsSecret, docRef };
  };

  if (idempotent && auth && typeof idempotencyKey === 'string') {
    const id = Idempotency.recordId(auth.key.id, idempotencyKey);
    const requestHash = createHash('sha256').update(`${method} ${url.pathname}\n`).update(raw).digest('hex');
    const result = await deps.idempotency.run(id, requestHash, execute);
    return jsonReply(result.status, result.body, result.replayed ? { 'Idempotent-Replayed': 'true' } : {});
  }
  const result = await execute();
  if (route.responseKind === 'html') return { status: result.status, headers: PAGE_HEADERS, body: result.body };
  return jsonReply(result.status, result.body);
}

function count(svc: ServiceCore, name: string): void {
  svc.stats.byRoute[name] = (svc.stats.byRoute[name] ?? 0) + 1;
}

function errorReply(svc: ServiceCore, error: unknown, html: boolean): Reply {
  const known =
    error instanceof HttpError
      ? error
      : new HttpError(500, 'internal_error', 'the local service failed on this request; see its log');
  if (!(error instanceof HttpError)) {
    svc.log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
  if (html) {
    const message = typeof known.detail === 'string' ? known.detail : 'The request is not valid.';
    const title = known.status >= 500 ? 'Something went wrong' : 'This link cannot be used';
    return { status: known.status, headers: { ...PAGE_HEADERS, ...known.headers }, body: resultPage(title, message) };
  }
  return {
    status: known.status,
    headers: { ...JSON_HEADERS, ...known.headers },
    body: JSON.stringify({ detail: known.detail, code: known.code }),
  };
}

function send(req: IncomingMessage, res: ServerResponse, reply: Reply, closing: boolean): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string | number> = {
    ...reply.headers,
    'Content-Length': Buffer.byteLength(reply.body),
  };
  // A body we did not read (refused early, or too large) is not worth draining: close the connection.
  const unread = !req.complete;
  if (closing || unread) headers.Connection = 'close';
  res.writeHead(reply.status, headers);
  res.end(reply.body);
  if (unread) res.once('finish', () => req.socket.destroySoon?.());
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { type RouteName, routes } from '../contract/index.js';
import { type AnyRoute, matchPath } from '../contract/route.js';
import { type AuthInfo, authenticate, requireScope } from './auth.js';
import { isDatabaseError } from './database.js';
import { HttpError } from './errors.js';
import * as documents from './handlers/documents.js';
import * as faces from './handlers/faces.js';
import * as keys from './handlers/keys.js';
import * as oauth from './handlers/oauth.js';
import * as threads from './handlers/threads.js';
import { ClientGone, jsonReply, parseJsonBody, type Reply, readBody, validate } from './http-util.js';
import { Idempotency, serializeBody } from './idempotency.js';
import { PAGE_HEADERS, providerPage, resultPage } from './oauth-pages.js';
import { type HandlerMap, PUBLIC_ROUTES, type ServiceCore } from './service-core.js';
import { AUTH_COLLECTIONS } from './store.js';

// Per request: the checks in the order docs/local-service-choices.md (HTTP) gives, the handler's preparation,
// then one transaction (its changes and the idempotency record), committed before the answer is sent.

/** Typed against the route names: a route without a handler does not compile. */
const handlers: HandlerMap = { ...oauth, ...keys, ...faces, ...documents, ...threads };

/** Patterns compiled once (contract's matchPath compiles on every call) pick the candidates. */
const ROUTE_LIST = (Object.entries(routes) as [RouteName, AnyRoute][]).map(([name, route]) => ({
  name,
  route,
  pattern: new RegExp(`^${route.path.replace(/\{[a-z_]+\}/g, '[^/]+')}$`),
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

export async function handleRequest(svc: ServiceCore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  svc.stats.requests++;
  let reply: Reply;
  let pathname = '?';
  // The request's share of the in-flight budget, held until its answer is sent (or it is dropped).
  const held: Held = { release: () => {}, html: false };
  // Released once the request is handled and its connection is done with, in whichever order: a client
  // that gave up closes it while a large request is still being counted.
  let handled = false;
  let closed = false;
  res.once('close', () => {
    closed = true;
    if (handled) held.release();
  });
  try {
    // Plain paths (every API path a client builds) are already what the URL parser would give: they skip it.
    const raw = req.url ?? '/';
    const url: Target = PLAIN_PATH.test(raw)
      ? { pathname: raw, searchParams: new URLSearchParams() }
      : new URL(raw, 'http://service.invalid');
    pathname = url.pathname;
    if (pathname.startsWith('/provider/')) {
      held.html = true;
      reply = await providerPage(svc, req, pathname, url.searchParams);
    } else {
      reply = await handleApi(svc, req, url, held);
    }
  } catch (error) {
    if (error instanceof ClientGone) return held.release();
    reply = errorReply(svc, error, held.html);
  }
  handled = true;
  if (closed) held.release();
  send(req, res, reply, svc.stopping.aborted);
  if (svc.accessLog) {
    svc.log(`${req.method} ${pathname} ${reply.status} ${(performance.now() - started).toFixed(1)}ms`, 'debug');
  }
}

type Held = { release: () => void; html: boolean };
type Target = Pick<URL, 'pathname' | 'searchParams'>;

const PLAIN_PATH = /^(?:\/[A-Za-z0-9_-]+)+$/;

async function handleApi(svc: ServiceCore, req: IncomingMessage, url: Target, held: Held): Promise<Reply> {
  const match = findRoute(req.method ?? 'GET', url.pathname);
  const { name, route } = match;
  svc.stats.byRoute[name] = (svc.stats.byRoute[name] ?? 0) + 1;
  held.html = route.responseKind === 'html';

  const now = () => svc.clock.now();
  const secret = req.headers.authorization;
  let auth: AuthInfo | null = null;
  const authStamp = svc.store.stamp(AUTH_COLLECTIONS);
  let share: ReturnType<ServiceCore['budget']> | undefined;
  if (!PUBLIC_ROUTES.has(name)) {
    auth = authenticate(svc.store, secret, now());
    const wait = svc.rateLimit?.(auth.key.id);
    if (wait != null) {
      throw new HttpError(429, 'rate_limited', `too many requests for this key; retry in ${wait} s`, {
        'Retry-After': String(wait),
      });
    }
    requireScope(auth, route);
    share = svc.budget(auth.user.id);
    held.release = share.release;
  }
  const { params, body, idempotent, large } = await readRequest(svc, req, match, url.pathname, auth, share?.add);
  // A large body's bytes and text are garbage now, its copy for counting soon: collected between steps.
  share?.tidy();
  const handler = handlers[name];
  const input = { params, body, auth, query: url.searchParams, svc };
  const replay = (who: AuthInfo | null) => {
    const prior = idempotent && who && svc.idempotency.replay(who, idempotent);
    return prior ? jsonReply(prior.status, prior.body, { 'Idempotent-Replayed': 'true' }) : null;
  };
  // A repeat of a large request is answered before its slow part (a count of its tokens) is done again.
  const early = large ? replay(auth) : null;
  if (early) return early;
  const prepared = typeof handler === 'function' ? {} : await handler.prepare(input as never);
  if (typeof handler !== 'function') share?.tidy();
  const run = typeof handler === 'function' ? handler : handler.run;

  // The request's transaction: its answer is sent only once it committed; anything thrown undoes it.
  return svc.store.request(() => {
    // Read again inside the transaction when a balance or a key may have changed while the body arrived.
    const current =
      auth && (svc.store.stamp(AUTH_COLLECTIONS) === authStamp ? auth : authenticate(svc.store, secret, now()));
    const repeat = replay(current);
    if (repeat) return repeat;
    const result = run({ ...input, auth: current, prepared } as never);
    if (route.responseKind === 'html') {
      return { status: result.status, headers: PAGE_HEADERS, body: String(result.body) };
    }
    const serialized = serializeBody(result.body);
    if (idempotent && current && result.status >= 200 && result.status < 300) {
      svc.idempotency.keep(current, idempotent, {
        status: result.status,
        holdsSecret: result.holdsSecret === true,
        ...serialized,
      });
    }
    return jsonReply(result.status, serialized.parts ?? serialized.body);
  });
}

/** Bodies from this size on have a slow part worth skipping for a replay (tokens counted in a worker). */
const LARGE_BODY = 256 * 1024;

/** Parameters, body, and an Idempotency-Key's digest; the bytes are not kept past this (one 60 MiB copy fewer). */
async function readRequest(
  svc: ServiceCore,
  req: IncomingMessage,
  match: ReturnType<typeof findRoute>,
  pathname: string,
  auth: AuthInfo | null,
  reserve: ((bytes: number) => void) | undefined,
) {
  const raw = await readBody(req, svc.maxBodyBytes, reserve);
  const { route } = match;
  const params = validate(route.params, match.params, 'path');
  // The service checks its own rules (serviceBody) where it has them, else what the seed states.
  const bodySchema = route.serviceBody ?? route.body;
  const body = bodySchema ? validate(bodySchema, parseJsonBody(raw), 'body') : undefined;
  const key = req.headers['idempotency-key'];
  const idempotent =
    req.method === 'POST' && auth !== null && typeof key === 'string'
      ? Idempotency.request(auth, key, req.method, pathname, raw)
      : null;
  return { params, body, idempotent, large: raw.length >= LARGE_BODY };
}

function errorReply(svc: ServiceCore, error: unknown, html: boolean): Reply {
  let known: HttpError;
  if (error instanceof HttpError) known = error;
  else if (isDatabaseError(error)) {
    // A write the disk refused (full, too large, failing): the transaction was rolled back.
    svc.log(`could not save state: ${(error as Error).message}`);
    known = new HttpError(500, 'storage_error', 'the change could not be saved; nothing of it was stored');
  } else {
    svc.log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    known = new HttpError(500, 'internal_error', 'the local service failed on this request; see its log');
  }
  if (html) {
    const message = typeof known.detail === 'string' ? known.detail : 'The request is not valid.';
    const title = known.status >= 500 ? 'Something went wrong' : 'This link cannot be used';
    return { status: known.status, headers: { ...PAGE_HEADERS, ...known.headers }, body: resultPage(title, message) };
  }
  return jsonReply(known.status, JSON.stringify({ detail: known.detail, code: known.code }), known.headers);
}

function send(req: IncomingMessage, res: ServerResponse, reply: Reply, closing: boolean): void {
  if (res.headersSent || res.destroyed) return;
  // A large body in parts (a document's: around its content, the content) is written part by part,
  // never joined into one more copy; a small one is joined: one write, one packet.
  const parts = typeof reply.body === 'string' ? [reply.body] : reply.body;
  if (parts.length > 1 && parts.reduce((sum, part) => sum + part.length, 0) < 256 * 1024)
    parts.splice(0, parts.length, parts.join(''));
  const headers: Record<string, string | number> = {
    ...reply.headers,
    'Content-Length': parts.reduce((sum, part) => sum + Buffer.byteLength(part), 0),
  };
  // A body not read (refused early, too large) is not worth draining: close. After 429/503, Node reads the rest
  // into the void, so a client still sending gets the answer and its Retry-After instead of a broken pipe.
  const unread = !req.complete && reply.status !== 429 && reply.status !== 503;
  if (closing || unread) headers.Connection = 'close';
  res.writeHead(reply.status, headers);
  for (const part of parts.slice(0, -1)) res.write(part);
  res.end(parts.at(-1));
  if (unread) res.once('finish', () => req.socket.destroySoon?.());
  else if (!req.complete) req.resume();
}

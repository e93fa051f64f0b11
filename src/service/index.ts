import { once, setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Idempotency } from './idempotency.js';
import { inflightBudget, rateLimiter } from './inflight.js';
import { OAuthFlows } from './oauth-flow.js';
import { type BootstrapUser, seedUsers } from './seed.js';
import { handleRequest } from './server.js';
import type { ImportFetcher, ServiceCore } from './service-core.js';
import { Store } from './store.js';

export { writeFailure } from './database.js';
export type { BootstrapUser } from './seed.js';
export type { ImportFetcher } from './service-core.js';

export interface ServiceOptions {
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  dataFile?: string;
  /** Let import fetch loopback URLs (local testing only). */
  allowPrivateUrls?: boolean;
  oauthProvider?: string;
  /** Requests per second per key (rateLimiter); off when undefined. */
  rateLimit?: number;
  clock?: ServiceCore['clock'];
  fetchUrl?: ImportFetcher;
  /** Time to receive a whole request (default 120 s). */
  requestTimeoutMs?: number;
  /** Time to receive the request headers (default 20 s). */
  headersTimeoutMs?: number;
  /** Largest request body (default 64 MiB); larger ones get 413. */
  maxBodyBytes?: number;
  /** Request bodies in flight per user (default: maxBodyBytes); the service's own budget is twice that. */
  inflightBytesPerUser?: number;
  consent?: ServiceCore['consent'];
  log?: ServiceCore['log'];
  accessLog?: boolean;
}

export type RunningService = Awaited<ReturnType<typeof startService>>;

const CLOSE_GRACE_MS = 10_000;

export async function startService(options: ServiceOptions = {}) {
  const clock = options.clock ?? { now: () => new Date() };
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? (() => {});
  const store = Store.open(options.dataFile);
  const shutdown = new AbortController();
  const stopping = new AbortController();
  // Every count in a worker and every import fetch in flight listens on these: no limit of 10 (Node's warning).
  setMaxListeners(0, shutdown.signal, stopping.signal);
  const maxBodyBytes = options.maxBodyBytes ?? 64 * 1024 * 1024;
  const perUser = options.inflightBytesPerUser ?? maxBodyBytes;
  const svc: ServiceCore = {
    store,
    clock,
    provider: options.oauthProvider ?? 'example',
    baseUrl: '',
    allowPrivateUrls: options.allowPrivateUrls === true,
    fetchUrl: options.fetchUrl ?? defaultFetcher,
    oauth: new OAuthFlows(clock),
    stats: { requests: 0, byRoute: {}, tokenExchanges: 0 },
    log,
    signal: shutdown.signal,
    stopping: stopping.signal,
    consent: options.consent ?? 'page',
    idempotency: new Idempotency(store, clock),
    rateLimit: options.rateLimit ? rateLimiter(options.rateLimit, clock) : null,
    budget: inflightBudget(perUser, 2 * perUser),
    maxBodyBytes,
    accessLog: options.accessLog === true,
  };
  let inflight = 0;
  let drained: (() => void) | null = null;
  const requestTimeout = options.requestTimeoutMs ?? 120_000;
  const headersTimeout = Math.min(options.headersTimeoutMs ?? 20_000, requestTimeout);
  const server = createServer(
    {
      requestTimeout,
      headersTimeout,
      // Node checks both timeouts on this interval (30 s by default), too coarse for short limits.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
      keepAliveTimeout: 5_000,
    },
    (req, res) => {
      inflight++;
      handleRequest(svc, req, res)
        .catch((error: Error) => log(`request failed: ${error.stack ?? error.message}`))
        .finally(() => {
          inflight--;
          if (inflight === 0) drained?.();
        });
    },
  );

  let users: BootstrapUser[];
  try {
    users = store.transaction(() => {
      svc.idempotency.purgeExpired();
      return seedUsers(store, clock.now());
    });
    server.listen(options.port ?? 0, host);
    await once(server, 'listening');
  } catch (error) {
    store.abandon();
    throw error;
  }
  svc.baseUrl = formatBaseUrl(host, (server.address() as AddressInfo).port);
  let accepted = 0;
  server.on('connection', () => void accepted++);

  let closed: Promise<void> | null = null;
  /** Graceful: requests in flight get CLOSE_GRACE_MS to finish, then the database is closed. */
  const stop = (graceful: boolean): Promise<void> =>
    (closed ??= (async () => {
      // Counts take seconds on hostile input; the requests waiting for them answer 503 now.
      stopping.abort();
      // Node accepts one waiting connection per turn of the event loop: after the loop was held (a first count loads
      // the tokenizer), closing the listener at once reset those still waiting, unanswered. It closes once two turns
      // (the first may run before any poll) take none, at most 1 s on; their requests are read by then.
      for (let idle = 0, until = Date.now() + 1000; graceful && idle < 2 && Date.now() < until;) {
        const before = accepted;
        await new Promise(setImmediate);
        idle = accepted === before ? idle + 1 : 0;
      }
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      if (graceful) {
        server.closeIdleConnections();
        if (inflight > 0) {
          svc.log(
            `stopping: waiting up to ${CLOSE_GRACE_MS / 1000} s for ${inflight} ${inflight === 1 ? 'request' : 'requests'} in flight ` +
              '(a second Ctrl-C or SIGTERM stops at once)',
            'notice',
          );
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, CLOSE_GRACE_MS);
            drained = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      }
      shutdown.abort();
      server.closeAllConnections();
      await done;
      if (graceful) store.close();
      else store.abandon();
    })());

  return {
    baseUrl: svc.baseUrl,
    /** One bootstrap key per plan: free, standard, pro, connect. */
    users,
    store,
    stats: svc.stats,
    /** Stops accepting, lets requests in flight finish, closes the database. */
    close: () => stop(true),
    /** Stops at once without saving anything more: what kill -9 leaves behind (for tests). */
    abort: () => stop(false),
  };
}

const defaultFetcher: ImportFetcher = async (url, options) =>
  (await import('./url-fetch/index.js')).fetchImportUrl(url, options);

/** The URL clients use: a wildcard address is reached on loopback; IPv6 literals need brackets. */
function formatBaseUrl(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '') return `http://127.0.0.1:${port}`;
  if (host === '::' || host === '[::]') return `http://[::1]:${port}`;
  if (host.includes(':') && !host.startsWith('[')) return `http://[${host}]:${port}`;
  return `http://${host}:${port}`;
}

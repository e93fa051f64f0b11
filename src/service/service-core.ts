import type * as z from 'zod/mini';
import type { RouteName, Routes } from '../contract/index.js';
import type { AnyRoute, ResponseOf } from '../contract/route.js';
import type { AuthInfo } from './auth.js';
import type { Idempotency } from './idempotency.js';
import type { inflightBudget } from './inflight.js';
import type { OAuthFlows } from './oauth-flow.js';
import type { Store } from './store.js';

export interface FetchedDocument {
  text: string;
  finalUrl: string;
  /** Without parameters, in lower case, e.g. `text/markdown`. */
  contentType: string;
}

/** Fetches an import URL. The default is src/service/url-fetch (SSRF defences); tests inject their own. */
export type ImportFetcher = (
  url: string,
  options: { allowPrivate: boolean; signal?: AbortSignal },
) => Promise<FetchedDocument>;

export interface ServiceCore {
  readonly store: Store;
  /** The service's sense of time; tests inject a clock they move by hand. */
  readonly clock: { now(): Date };
  /** The local OAuth provider's id (`example` unless --oauth-provider). */
  readonly provider: string;
  /** http://host:port, known once the server listens. */
  baseUrl: string;
  readonly allowPrivateUrls: boolean;
  readonly fetchUrl: ImportFetcher;
  readonly oauth: OAuthFlows;
  /** Requests in all and per route name; authorization codes the local provider exchanged for a token. */
  readonly stats: { requests: number; byRoute: Record<string, number>; tokenExchanges: number };
  /** The service's own message line: a `warning` (a failure; the default), a `notice`, or `debug` (the access log). */
  readonly log: (line: string, kind?: 'warning' | 'notice' | 'debug') => void;
  /** Aborted when the service closes (cancels import fetches in flight). */
  readonly signal: AbortSignal;
  /** Aborted as soon as the service begins to stop: counts in progress end (503), answers carry Connection: close. */
  readonly stopping: AbortSignal;
  /** `serve --consent`: a person answers the consent page, or the service approves or denies at once. */
  readonly consent: 'page' | 'approve' | 'deny';
  readonly idempotency: Idempotency;
  /** `--rate-limit`: takes a request of this key, giving null or the seconds it must wait (429). */
  readonly rateLimit: ((keyId: string) => number | null) | null;
  /** A request's share of the in-flight byte budgets, by user. */
  readonly budget: ReturnType<typeof inflightBudget>;
  readonly maxBodyBytes: number;
  /** One line per request (method, path without query, status, time); never headers or bodies. */
  readonly accessLog: boolean;
}

/** Routes a browser reaches without a key (they authenticate by a single-use state instead). */
type PublicRouteName = 'oauthCallback';
export const PUBLIC_ROUTES: ReadonlySet<RouteName> = new Set<RouteName>(['oauthCallback'] satisfies PublicRouteName[]);

type InputOf<N extends RouteName, R extends AnyRoute = Routes[N]> = {
  params: z.output<R['params']>;
  body: R['serviceBody'] extends z.ZodMiniType
    ? z.output<R['serviceBody']>
    : R['body'] extends z.ZodMiniType
      ? z.output<R['body']>
      : undefined;
  auth: N extends PublicRouteName ? null : AuthInfo;
  query: URLSearchParams;
  svc: ServiceCore;
};

/** `seen`: a stamp of what the request changes, taken before its count (a thread changed meanwhile is refused). */
type Prepared = { tokenCount?: number; fetched?: FetchedDocument; seen?: string };

/** Run inside the request's transaction: synchronous, so no other request runs between its reads and writes. */
export type Handler<N extends RouteName> = (input: InputOf<N> & { prepared: Prepared }) => {
  status: number;
  body: ResponseOf<Routes[N]>;
  /** The body holds a key secret: its idempotency record keeps no body (the replay's is in memory only). */
  holdsSecret?: boolean;
};

/**
 * Slow work (counting a large text's tokens, fetching a URL) is done by `prepare` before the transaction,
 * so other requests are answered meanwhile; it may read, never write. `run` rereads what it relies on.
 */
export interface PreparedHandler<N extends RouteName> {
  prepare(input: InputOf<N>): Promise<Prepared>;
  run: Handler<N>;
}

export type HandlerMap = { [N in RouteName]: Handler<N> | PreparedHandler<N> };

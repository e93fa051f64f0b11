import type { Idempotency } from './idempotency.js';
import type { InflightBudget } from './inflight.js';
import type { OAuthFlows } from './oauth-flow.js';
import type { Store } from './store.js';

/** The service's own message line: a `warning` (a failure; the default), a `notice`, or `debug` (the access log). */
export type ServiceLog = (line: string, kind?: 'warning' | 'notice' | 'debug') => void;

/** The service's sense of time; tests inject a clock they move by hand. */
export interface ServiceClock {
  now(): Date;
}

export interface FetchedDocument {
  text: string;
  /** After redirects. */
  finalUrl: string;
  /** Without parameters, in lower case, e.g. `text/markdown`. */
  contentType: string;
}

/** Fetches an import URL. The default is src/service/url-fetch (SSRF defences); tests inject their own. */
export type ImportFetcher = (
  url: string,
  options: { allowPrivate: boolean; signal?: AbortSignal },
) => Promise<FetchedDocument>;

export interface ServiceStats {
  requests: number;
  /** Requests per route name (and `page` for the consent page, `unmatched` for 404s). */
  byRoute: Record<string, number>;
  fetches: number;
  /** Authorization codes the local provider exchanged for a token. */
  tokenExchanges: number;
}

/** `serve --consent`: a person answers the consent page, or the service approves or denies at once. */
export type ConsentMode = 'page' | 'approve' | 'deny';

export interface ServiceCore {
  readonly store: Store;
  readonly clock: ServiceClock;
  /** The local OAuth provider's id (`example` unless --oauth-provider). */
  readonly provider: string;
  /** http://host:port, known once the server listens. */
  baseUrl: string;
  readonly allowPrivateUrls: boolean;
  readonly fetchUrl: ImportFetcher;
  readonly oauth: OAuthFlows;
  readonly stats: ServiceStats;
  readonly log: ServiceLog;
  /** Aborted when the service closes (cancels import fetches in flight). */
  readonly signal: AbortSignal;
  /** Aborted as soon as the service begins to stop: counts in progress end (503), answers carry Connection: close. */
  readonly stopping: AbortSignal;
  readonly consent: ConsentMode;
  readonly idempotency: Idempotency;
  /** `--rate-limit`: takes a request of this key, giving null or the seconds it must wait (429). */
  readonly rateLimit: ((keyId: string) => number | null) | null;
  readonly budget: InflightBudget;
  readonly maxBodyBytes: number;
  /** One line per request (method, path without query, status, time); never headers or bodies. */
  readonly accessLog: boolean;
}

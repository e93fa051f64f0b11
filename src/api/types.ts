import type { AnyRoute, BodyOf, ParamsOf } from '../contract/route.js';
import { UsageError } from '../errors.js';
import type { AnswerOf } from './answers.js';
import type { LargeStrings } from './large-strings.js';
import type { RateGate } from './rate-gate.js';

/** The default base URL: a `facectl serve` on this machine. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787';

/**
 * A base URL as every part of facectl takes it: http(s), without a user name or password, not ending in
 * /v1 (every path starts with it: /v1/v1/...). `via` names where it came from; `fix` how to correct it there.
 */
export function checkBaseUrl(value: string, via = 'the base URL', fix = (url: string) => `use ${url}`): URL {
  const invalid = (problem: string, example = 'https://api.example.com') =>
    new UsageError(`${via}: ${problem}`, { code: 'invalid_base_url', hint: fix(example.replace(/\/$/, '')) });
  // A host without its scheme (`127.0.0.1:8787`): the URL meant, http:// on this machine (as `facectl serve`). A
  // scheme is a word and a colon not before a port's digits (`htp:/x` is one, mistyped).
  const meant = /^[a-z][\w+.-]*:(?!\d)|:\/\//i.test(value) ? null : URL.parse(`http://${value}`);
  if (meant) {
    if (!/^((.+\.)?localhost|127(\.\d+){3}|\[::1\])$/i.test(meant.hostname)) meant.protocol = 'https:';
    throw invalid(`not a valid URL (no http:// or https://): ${value}`, meant.href);
  }
  const url = URL.parse(value);
  if (!url) throw invalid(`not a valid URL: ${value}`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(`must use http or https: ${value}`);
  if (url.username || url.password) throw invalid('must not carry a user name or password', url.origin + url.pathname);
  if (/\/v1\/*$/i.test(url.pathname)) {
    const without = `${url.origin}${url.pathname.replace(/\/v1\/*$/i, '')}`;
    throw new UsageError(`${via} ${value} ends in /v1: drop the /v1 and use ${without}`, {
      code: 'base_url_with_version',
      hint: `facectl adds /v1 to every path itself (${without}/v1/faces/...); ${fix(without)}`,
    });
  }
  return url;
}

export interface CallOptions {
  signal?: AbortSignal;
  idempotencyKey?: string;
  /**
   * The body already serialized (a batch line as read, a streamed document), sent instead of JSON of
   * `input.body`, which is still given as what is checked against the contract (for a streamed text,
   * its first characters). A function returning a fresh stream may be retried; a bare iterable is not.
   */
  rawBody?: AsyncIterable<Uint8Array> | Uint8Array | string | (() => AsyncIterable<Uint8Array>);
  /** Read the answer as it arrives, these top-level strings kept out of memory (large-strings.ts). */
  largeStrings?: LargeStrings;
  /** A pause shared with the other requests of a batch: a 429 makes them all wait (rate-gate.ts). */
  gate?: RateGate;
  /** Read only the fields the route needs (readAnswer): a batch keeps no more. */
  neededOnly?: boolean;
  /** `input.body` passed a check at least as strict as the contract's already (src/input/documents.ts). */
  bodyChecked?: boolean;
}

/** A request outside the contract (`facectl api` on a path no route matches): sent without validation. */
export interface RawRequest {
  method: string;
  /** With its query, relative to the base URL. */
  path: string;
  body?: unknown;
  /** A body sent as is (`facectl api --input`), instead of `body` serialized as JSON. */
  bodyText?: string;
  /** Headers of the caller's own (lower-case names); they replace facectl's of the same name. */
  headers?: Record<string, string>;
  /** Return every answer, 3xx and 4xx/5xx included, instead of throwing for them. */
  anyStatus?: boolean;
  signal?: AbortSignal;
}

export interface RawResponse {
  status: number;
  statusText?: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the body is JSON, else the text. */
  body: unknown;
}

export interface ApiClient {
  readonly baseUrl: string;
  call<R extends AnyRoute>(
    route: R,
    input: { params?: ParamsOf<R>; body?: BodyOf<R> },
    options?: CallOptions,
  ): Promise<AnswerOf<R>>;
  /** Sends a request that no route describes; errors are mapped like call()'s. */
  request(request: RawRequest): Promise<RawResponse>;
  close(): Promise<void>;
}

import ipaddr from 'ipaddr.js';
import { ApiError, ExitCode, type ExitCodeValue, NetworkError, ResponseError } from '../errors.js';
import type { KeySource } from '../context.js';
import type { Limits } from './node-http.js';

/**
 * `path`: the route's template, or the concrete path of a request no route describes (`outsideContract`);
 * `keySource`: where the key sent came from, when known.
 */
export type ExchangeInfo = {
  method: string;
  path: string;
  baseUrl: string;
  outsideContract?: boolean;
  keySource?: KeySource;
  /** Sent with an Idempotency-Key the caller keeps (a batch's line): sent again with it, it is not done twice. */
  keyed?: boolean;
};

/** Where a new key goes, by where the refused one came from (the fixes of a 401 and of doctor's "key works"). */
export const NEW_KEY_HINTS: Record<KeySource, string> = {
  profile: 'run `facectl auth login` with a new key',
  env: 'set FACECTL_API_KEY to a new key',
  stdin: 'give a new key with --api-key-stdin',
};

/** An error answer of the service as an ApiError: its status, code, detail and the fix to try. */
export function errorFromResponse(status: number, body: unknown, info: ExchangeInfo, retryAfterSeconds?: number) {
  // The service answers errors in JSON: a 4xx without JSON came from something else at the base URL (a web
  // server, a proxy), though a 413 or 429 means the same from whoever says it; so did a 501 (that server does
  // not do the method). A 5xx page of a proxy is shown as a snippet, not whole.
  const snippet = typeof body === 'string' ? body.replace(/\s+/g, ' ').trim().slice(0, 120) : undefined;
  if (
    typeof body === 'string' &&
    ((status >= 400 && status < 500 && status !== 413 && status !== 429) || status === 501)
  ) {
    return new ResponseError(
      `${info.method} ${info.path}: HTTP ${status} with ${snippet ? `a body that is not JSON: ${snippet}` : 'an empty body'}; ` +
        'not an answer of the Face Compilation Service',
      {
        hint: `check the base URL (${info.baseUrl}): it should point at the service itself; run with --debug to see the exchange`,
      },
    );
  }
  const parsed = (typeof body === 'object' && body !== null ? body : {}) as { detail?: unknown; code?: unknown };
  const code = typeof parsed.code === 'string' ? parsed.code : (STATUS_CODES[status] ?? `http_${status}`);
  const detail = parsed.detail ?? (snippet || undefined);
  const detailText = typeof detail === 'string' ? detail : undefined;
  const where = `${info.method} ${info.path}`;
  const make = (message: string, hint?: string, exitCode?: ExitCodeValue) =>
    new ApiError(message, status, { code, detail, exitCode, ...(hint ? { hint } : {}) });

  switch (status) {
    case 401:
      return make(
        `the service refused the API key (401${detailText ? `: ${detailText}` : ''})`,
        // Not known: a key given to the library, or `facectl api` with an Authorization header of its own.
        info.keySource
          ? NEW_KEY_HINTS[info.keySource]
          : 'run `facectl auth login` with a valid key, or check FACECTL_API_KEY',
      );
    case 402:
      return make(detailText ?? `payment required by ${where}`, hintForRefusal(code, detailText));
    case 403:
      return make(detailText ?? `forbidden: ${where}`, hintForRefusal(code, detailText));
    case 404:
      return make(detailText ?? `not found: ${where}`, hintForNotFound(code, info));
    case 409:
      return make(detailText ?? `conflict: ${where}`, hintForConflict(code));
    case 413:
      return make(
        detailText ?? 'the request body is larger than the service accepts',
        'send less content per request (split the document)',
      );
    case 400:
    case 422:
      // The service could not fetch an import's URL (or would not): the URL is what to fix, not the request's
      // values. A site down or missing is a failure a script may retry (exit 1); a URL refused is input (exit 2).
      if (code === 'fetch_failed' || code === 'url_not_allowed') {
        return make(
          `the service could not import the URL: ${detailText ?? code}`,
          hintForImportFetch(code, detailText),
          code === 'fetch_failed' ? ExitCode.error : undefined,
        );
      }
      // The same key with other bytes: in a batch, a line in flight at a stop and written in another form since.
      if (code === 'idempotency_mismatch') {
        return make(
          detailText ?? `the service refused a request sent again with other bytes (${status} ${code})`,
          'it was sent before in another form under the same Idempotency-Key: put it back as it was sent (a batch ' +
            'line: as it stood when the batch stopped), then run the command again',
        );
      }
      return make(
        Array.isArray(detail)
          ? `the service refused the request as invalid (${status} ${code})`
          : (detailText ?? `the service refused the request as invalid (${status})`),
        Array.isArray(detail)
          ? 'fix the values listed above and run the command again'
          : 'fix what the message names and run the command again',
      );
    case 429:
      return make(
        `rate limited by the service (429)${detailText ? `: ${detailText}` : ''}`,
        retryAfterSeconds !== undefined
          ? `retry after ${formatWait(retryAfterSeconds)}`
          : 'wait a little and run the command again',
      );
    default:
      return make(
        `${where} failed with ${status}${detailText ? `: ${detailText}` : ''}`,
        status >= 500 ? 'the service had a problem; try again later (run with --debug for the exchange)' : undefined,
      );
  }
}

function hintForImportFetch(code: string, detail = ''): string {
  if (code === 'url_not_allowed') {
    if (/user name or password/.test(detail)) return 'give the URL without a user name or password';
    if (/scheme/.test(detail)) return 'give an http:// or https:// URL';
    return (
      'give a public URL: the service does not fetch private, loopback or otherwise internal addresses ' +
      '(`facectl serve --allow-private-urls` fetches loopback ones, for tests)'
    );
  }
  const status = /answered (?:HTTP )?(\d{3})/.exec(detail)?.[1];
  if (status !== undefined) {
    const n = Number(status);
    const why =
      n === 404 || n === 410
        ? 'no such page there'
        : n === 401 || n === 403
          ? 'the page needs a login the service does not have'
          : n >= 500
            ? 'a problem on that server: try again later'
            : 'not a page the service can import';
    return `check the URL: the server there answered HTTP ${status} (${why})`;
  }
  if (/cannot connect|cannot resolve|timed out|fetch failed/.test(detail)) {
    return (
      "check the URL's host name and port, and that the site is up and reachable over the network from " +
      'the service (the service fetches the URL, not this machine)'
    );
  }
  return 'check the URL: it must give a text document (text, JSON, XML or Markdown) the service can reach';
}

const STATUS_CODES: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'not_authenticated',
  402: 'payment_required',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'validation_error',
  429: 'rate_limited',
};

/** By the answer's code, else (a route of the contract) by the path's start. */
const NOT_FOUND_HINTS: [code: string | undefined, hint: string, path?: string][] = [
  ['unknown_provider', 'check the provider name (`facectl oauth list` shows the known ones)', '/v1/oauth'],
  ['not_connected', 'nothing to do: that provider is not connected (`facectl oauth list` shows the connections)'],
  ['face_not_found', 'check the face: faces are found by uid or alias', '/v1/faces'],
  ['document_not_found', 'check the document id (doc_...); `facectl docs submit` prints it', '/v1/compile/documents'],
  ['thread_not_found', 'check the thread id (thr_...); `facectl threads create` prints it', '/v1/compile/threads'],
  [undefined, 'check the key id and the base URL', '/v1/auth/api-keys'],
];

function hintForNotFound(code: string, info: ExchangeInfo): string {
  const found =
    NOT_FOUND_HINTS.find(([byCode]) => byCode === code) ??
    (info.outsideContract ? undefined : NOT_FOUND_HINTS.find(([, , path]) => path && info.path.startsWith(path)));
  return found?.[1] ?? `the service has no endpoint ${info.method} ${info.path}; \`facectl openapi\` lists them`;
}

const REFUSAL_HINTS: Readonly<Record<string, string>> = {
  plan_required:
    'OAuth connections need a key of a user on the Connect plan: use one (`--profile <profile>`, the profile it is ' +
    'stored in, or FACECTL_API_KEY set to it)',
  // The second command names another profile (so forProfile leaves it): run with this key, it would be refused too.
  insufficient_scope:
    'use a key that has the scope named above: log in with one (`facectl auth login`), or create one with another key ' +
    'that has that scope and v1:keys:write (not this one): `facectl keys create --scopes <scope> --profile <profile>`, ' +
    '<profile> the profile that key is stored in (or with FACECTL_API_KEY set to it)',
  face_not_allowed: "this key's allowed_face_ids does not include that face; use a key allowed to use it",
  model_not_allowed: "this key's allowed_llm_models does not include that model; use a key allowed to use it",
  key_escalation:
    'a key can only create keys with narrower scopes, an earlier expiry and a smaller budget than its own',
  budget_exceeded:
    "this key's budget_usd has too little left for this request; use a key with more left, or create one with a larger --budget-usd",
  insufficient_credits: 'add credits to the account, or connect an OAuth provider on the Connect plan',
  insufficient_quota:
    'the monthly compile quota is used up; choose another --interviewer-billing-source or wait for next month',
};

function hintForRefusal(code: string, detail: string | undefined): string {
  if (Object.hasOwn(REFUSAL_HINTS, code)) return REFUSAL_HINTS[code] as string;
  return detail ? 'the key or the plan does not allow this request' : 'check the key, its scopes and the plan';
}

function hintForConflict(code: string): string {
  if (code === 'billing_source_unavailable') {
    return 'choose another --interviewer-billing-source, or leave it out for the automatic choice';
  }
  if (code.includes('alias')) return 'choose another --alias';
  return 'the resource already exists or is in another state; check it and try again';
}

/** Seconds as exact as set (`0.003 s`), never rounded to a `0.0 s` that reads as no limit at all. */
export function formatLimit(ms: number): string {
  return `${Math.round(ms) / 1000} s`;
}

function formatWait(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.ceil(seconds / 60)} min`;
  return `${Math.round(seconds / 360) / 10} h`;
}

/**
 * True for hosts where a plain-http key is not exposed to a network: localhost, *.localhost and loopback
 * addresses in every spelling the URL parser leaves (IPv4-mapped 127.x comes as `[::ffff:7f00:1]`).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIpLiteral(host) && ipaddr.process(host).range() === 'loopback';
}

/**
 * An IPv4 address in its dotted form or an IPv6 address (ipaddr.js alone also reads `0x7f.1`). Not
 * node:net's isIP: importing node:net costs each start of an API command a millisecond.
 */
export const isIpLiteral = (host: string): boolean =>
  ipaddr.IPv4.isValidFourPartDecimal(host) || ipaddr.IPv6.isValid(host);

/**
 * A failure below HTTP (refused, reset, timeout, DNS) as a NetworkError naming what to check. `reached`:
 * what an earlier attempt met (a drop, a 5xx): the request may have been applied, so it is not `unsent`.
 */
export function networkErrorFrom(error: unknown, info: ExchangeInfo, limits: Limits, reached?: string) {
  const code = errorCode(error);
  const host = new URL(info.baseUrl).hostname;
  // OpenSSL's messages end in a line break.
  const reason = (error as Error | undefined)?.message.replace(/\s+/g, ' ').trim();
  const check = isLoopbackHost(host)
    ? 'is `facectl serve` running? (start it with `facectl serve`, or point --base-url at the service)'
    : 'check --base-url / FACECTL_BASE_URL and your network';
  const unreached = (message: string, details: { code?: string; hint?: string } = {}) =>
    new NetworkError(
      reached
        ? `${message}, on trying ${info.method} ${info.path} again after ${reached}; the first attempt may have been applied`
        : message,
      { hint: check, ...details, cause: error, unsent: !reached },
    );
  // A change the service had whole when the wait ended may have been made all the same.
  const made =
    info.method === 'GET' || info.method === 'HEAD'
      ? ''
      : `it may have been done all the same (sent again${info.keyed ? ' with its Idempotency-Key, it is not done twice' : ', it may be done twice'}); `;
  const slow = (message: string) =>
    new NetworkError(message, {
      code: 'timeout',
      hint: `${made}set FACECTL_HTTP_TIMEOUT=SECONDS to wait longer`,
      cause: error,
    });
  if (code !== undefined && /CERT|SELF_SIGNED|UNABLE_TO_(?:VERIFY|GET)|ALTNAME/.test(code)) {
    return unreached(`cannot reach ${info.baseUrl}: its TLS certificate is not accepted (${reason})`, {
      code: 'tls_error',
      hint: `check the base URL's host name; a certificate of a private authority needs NODE_EXTRA_CA_CERTS=FILE, FILE its PEM file`,
    });
  }
  switch (code) {
    case 'ERR_SSL_WRONG_VERSION_NUMBER':
    case 'EPROTO':
      return unreached(`cannot reach ${info.baseUrl}: the server there does not answer in TLS (${reason})`, {
        code: 'tls_error',
        hint: 'check the scheme of the base URL: http:// or https://',
      });
    case 'FACECTL_PROXY':
      return unreached(reason ?? 'the proxy failed', {
        code: 'proxy_error',
        hint: (error as { hint?: string }).hint ?? 'check HTTP(S)_PROXY',
      });
    case 'ECONNREFUSED':
      return unreached(`cannot reach ${info.baseUrl}: connection refused`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return unreached(`cannot reach ${info.baseUrl}: host ${host} not found`);
    case 'UND_ERR_CONNECT_TIMEOUT':
      // Not only a service that is down: a limit too short for the connection (FACECTL_HTTP_TIMEOUT=0.001).
      return unreached(`cannot reach ${info.baseUrl}: no connection within ${formatLimit(limits.connectMs)}`, {
        code: 'timeout',
        hint: `${check}; if it is slow to accept, set FACECTL_HTTP_TIMEOUT=SECONDS to wait longer`,
      });
    case 'UND_ERR_HEADERS_TIMEOUT':
      return slow(`${info.method} ${info.path}: no response within ${formatLimit(limits.headersMs)}`);
    case 'UND_ERR_BODY_TIMEOUT':
      return slow(`${info.method} ${info.path}: the response stalled (no data for ${formatLimit(limits.bodyMs)})`);
    case 'UND_ERR_HEADERS_OVERFLOW':
    case 'HPE_HEADER_OVERFLOW':
      // The same answer comes again: not a failure to try again, an answer no client of the interface takes.
      return new ResponseError(
        `the response of ${info.method} ${info.path} has headers larger than facectl reads; not an answer of the Face Compilation Service`,
        {
          code: 'response_too_large',
          hint: `check the base URL (${info.baseUrl}) and any proxy between: run with --debug to see the exchange`,
          cause: error,
        },
      );
    default:
      // "Try again" only where trying again can help: a connection reset or dropped mid-answer.
      return new NetworkError(
        `${info.method} ${info.path}: the connection to ${info.baseUrl} dropped${reason ? ` (${reason})` : ''}`,
        {
          hint: `${made || (isRetryableNetworkError(error) ? 'try again; ' : '')}run with --debug to see the exchange`,
          cause: error,
        },
      );
  }
}

/** The code of a socket, node:http or undici error, looking through AggregateError (happy eyeballs) and causes. */
export function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; errors?: unknown[]; cause?: unknown } | undefined;
  if (typeof e?.code === 'string') return e.code;
  if (Array.isArray(e?.errors) && e.errors.length > 0) return errorCode(e.errors[0]);
  return e?.cause ? errorCode(e.cause) : undefined;
}

/** Resets and drops before a complete answer: safe to retry for requests that may be repeated. */
const RETRYABLE = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_CLOSED']);
export const isRetryableNetworkError = (error: unknown): boolean => RETRYABLE.has(errorCode(error) as string);

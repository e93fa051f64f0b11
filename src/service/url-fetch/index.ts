/**
 * Document import's fetcher and its SSRF defences: every hop is checked from scratch (scheme, credentials,
 * every resolved address, then the socket's real peer). Redirects are followed here, by hand, so no hop
 * escapes the checks. One deadline covers the whole fetch; the body is counted while it streams.
 */
import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { FetchedDocument } from '../service-core.js';
import { checkAddress, sameAddress } from './address-policy.js';
import { type ConnectRequest, type ConnectResponse, type ConnectStep, connectPinned } from './connect.js';

/** `url_not_allowed`: the URL or a redirect points where the service must not reach; `fetch_failed`: no usable text. */
export class UrlFetchError extends Error {
  constructor(
    readonly code: 'url_not_allowed' | 'fetch_failed',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'UrlFetchError';
  }
}

const notAllowed = (message: string) => new UrlFetchError('url_not_allowed', message);
const fetchFailed = (message: string, cause?: unknown) =>
  new UrlFetchError('fetch_failed', message, cause === undefined ? undefined : { cause });

type LookupFunction = (hostname: string, options: { all: true }) => Promise<LookupAddress[]>;

type ResolvedAddress = Pick<ConnectRequest, 'address' | 'family'>;

/** What can be checked without DNS. `what` starts the error message. */
function parseImportUrl(raw: string, what = 'URL'): URL {
  if (!URL.canParse(raw)) throw notAllowed(`${what} ${JSON.stringify(shorten(raw))} is not a valid absolute URL`);
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw notAllowed(`${what} is refused: the "${url.protocol}" scheme is not allowed (only http and https)`);
  }
  if (url.username !== '' || url.password !== '') {
    url.username = url.password = '';
    throw notAllowed(`${what} ${shorten(url.href)} is refused: URLs with a user name or password are not allowed`);
  }
  return url;
}

/** For messages, cut to a readable length (past parseImportUrl, a URL has no credentials to hide). */
const shorten = (text: string): string => (text.length > 200 ? `${text.slice(0, 200)}...` : text);

/** Every address of the URL's host, each checked: one disallowed refuses the URL (a connection could land on any). */
async function resolveAllowed(url: URL, allowPrivate: boolean, lookup: LookupFunction, what: string) {
  // WHATWG URL has already turned numeric hosts (`http://2130706433/`, `http://0x7f.1/`) into dotted ones.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = isIP(host) === 0 ? undefined : host;
  let found: LookupAddress[];
  if (literal !== undefined) {
    found = [{ address: literal, family: isIP(literal) }];
  } else {
    try {
      found = await lookup(url.hostname, { all: true });
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw fetchFailed(`cannot resolve ${url.hostname}: ${reason}`, error);
    }
    if (found.length === 0) throw fetchFailed(`cannot resolve ${url.hostname}: no addresses`);
  }
  return found.map(({ address }): ResolvedAddress => {
    const verdict = checkAddress(address, allowPrivate);
    if (!verdict.allowed) {
      const via = literal === undefined ? `${url.hostname} resolves to ${address}, and ` : '';
      throw notAllowed(`${what} ${shorten(url.href)} is refused: ${via}${verdict.reason}`);
    }
    // The family comes from the address itself, not from what the lookup claimed.
    return { address, family: isIP(address) === 6 ? 6 : 4 };
  });
}

export interface FetchImportOptions {
  /** Admit loopback addresses (127.0.0.0/8, ::1, ::ffff:127.x); every other non-public one stays refused. */
  allowPrivate: boolean;
  maxBytes?: number;
  /** One deadline for everything: DNS, connecting, redirects and the body. */
  timeoutMs?: number;
  maxRedirects?: number;
  lookup?: LookupFunction;
  connect?: ConnectStep;
  /** Aborts the fetch early (for example when the service shuts down). */
  signal?: AbortSignal;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const TEXT_TYPES = new Set(['application/json', 'application/xml', 'application/xhtml+xml', 'application/markdown']);
const REQUEST_HEADERS = {
  accept: 'text/*, application/json, application/xml, application/xhtml+xml, application/markdown',
  // Compressed bodies are refused below: asking for identity keeps the size cap about real bytes.
  'accept-encoding': 'identity',
  'user-agent': 'facectl-serve-import',
  connection: 'close',
};

export async function fetchImportUrl(url: string, options: FetchImportOptions): Promise<FetchedDocument> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxRedirects = options.maxRedirects ?? 3;
  const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  try {
    let current = parseImportUrl(url);
    let what = 'URL';
    for (let redirects = 0; ; redirects++) {
      const lookup = options.lookup ?? dnsLookup;
      const addresses = await raceAbort(resolveAllowed(current, options.allowPrivate, lookup, what), signal);
      const response = await connectChecked(current, addresses, options.connect ?? connectPinned, signal);
      if (!REDIRECT_STATUSES.has(response.status)) return await readText(current, response, maxBytes, signal);
      response.close();
      if (redirects >= maxRedirects) throw fetchFailed(`too many redirects (more than ${maxRedirects})`);
      what = 'redirect target';
      const location = response.headers.location;
      if (location === undefined)
        throw fetchFailed(`${shorten(current.href)} answered ${response.status} without a Location`);
      if (!URL.canParse(location, current.href))
        throw fetchFailed(`${shorten(current.href)} redirected to an invalid URL`);
      current = parseImportUrl(new URL(location, current).href, what);
    }
  } catch (error) {
    if (error instanceof UrlFetchError) throw error;
    // The first of the two signals to fire gives its reason to both.
    if (signal.aborted)
      throw fetchFailed(
        signal.reason === deadline.reason ? `timed out after ${timeoutMs} ms` : 'the fetch was cancelled',
      );
    throw fetchFailed(`fetch failed: ${(error as Error).message}`, error);
  }
}

/** Tries the checked addresses in turn (a name may be served on its IPv6 or IPv4 only), then checks the real peer. */
async function connectChecked(url: URL, addresses: ResolvedAddress[], connect: ConnectStep, signal: AbortSignal) {
  let lastError: unknown;
  for (const { address, family } of addresses) {
    let response: ConnectResponse;
    const pending = connect({ url, address, family, headers: { ...REQUEST_HEADERS }, signal });
    // A connect step that ignores the signal may still answer after the deadline: drop that answer.
    pending.then(
      (late) => signal.aborted && late.close(),
      () => {},
    );
    try {
      response = await raceAbort(pending, signal);
    } catch (error) {
      if (error instanceof UrlFetchError || signal.aborted) throw error;
      lastError = error;
      continue;
    }
    // The peer must be the checked address, so is as allowed (an IPv4-mapped form is judged as its IPv4 one).
    const peer = response.remoteAddress;
    if (peer === undefined || !sameAddress(peer, address)) {
      response.close();
      throw notAllowed(`${shorten(url.href)} connected to ${peer ?? 'an unknown address'}, not the checked ${address}`);
    }
    return response;
  }
  const reason = (lastError as NodeJS.ErrnoException)?.code ?? (lastError as Error)?.message ?? 'no address';
  throw fetchFailed(`cannot connect to ${url.host}: ${reason}`, lastError);
}

async function readText(url: URL, response: ConnectResponse, maxBytes: number, signal: AbortSignal) {
  try {
    if (response.status < 200 || response.status > 299) {
      throw fetchFailed(`${shorten(url.href)} answered HTTP ${response.status}`);
    }
    const contentType = response.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
    if (!contentType) throw fetchFailed(`${shorten(url.href)} sent no Content-Type; only text can be imported`);
    if (!/^text\/[a-z0-9.+-]+$/.test(contentType) && !TEXT_TYPES.has(contentType)) {
      throw fetchFailed(
        `${shorten(url.href)} sent ${contentType}; only text, JSON, XML, XHTML and Markdown can be imported`,
      );
    }
    const encoding = response.headers['content-encoding']?.trim().toLowerCase();
    if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
      throw fetchFailed(`${shorten(url.href)} sent a ${encoding}-encoded body, which is not supported`);
    }
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(url, maxBytes);
    const chunks: Uint8Array[] = [];
    let total = 0;
    const iterator = response.body[Symbol.asyncIterator]();
    for (;;) {
      const next = await raceAbort(iterator.next(), signal);
      if (next.done) break;
      total += next.value.byteLength;
      if (total > maxBytes) throw tooLarge(url, maxBytes);
      chunks.push(next.value);
    }
    // A stray byte becomes U+FFFD rather than failing the import. A leading BOM is dropped.
    const text = decodeText(Buffer.concat(chunks, total), response.headers['content-type']);
    return { text, finalUrl: url.href, contentType };
  } finally {
    response.close();
  }
}

/**
 * `bytes` in the charset `contentType` names (a WHATWG label: `iso-8859-1`, `shift_jis`, ...); as UTF-8 when it
 * names none, or one TextDecoder does not know (the page may well be UTF-8; refusing it would lose the text).
 */
function decodeText(bytes: Uint8Array, contentType: string | undefined): string {
  const label = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  try {
    if (label !== undefined) return new TextDecoder(label).decode(bytes);
  } catch {
    // ERR_ENCODING_NOT_SUPPORTED: as without a label.
  }
  return new TextDecoder('utf-8').decode(bytes);
}

const tooLarge = (url: URL, maxBytes: number) =>
  fetchFailed(`${shorten(url.href)} is larger than the import limit of ${maxBytes} bytes`);

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

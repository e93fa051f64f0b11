/**
 * The checks made on every URL of an import, the first one and each redirect target alike: the
 * scheme, credentials, and the addresses its host resolves to. Parsing is WHATWG URL's, the same a
 * browser does, so numeric hosts (`http://2130706433/`, `http://0x7f.1/`) arrive here already
 * normalised to the dotted address they mean.
 */
import { isIP } from 'node:net';
import { checkAddress } from './address-policy.js';
import { fetchFailed, notAllowed } from './errors.js';

export interface LookupAddress {
  address: string;
  family: number;
}

/** The shape of node:dns/promises `lookup(hostname, { all: true })`, which is the default. */
export type LookupFunction = (hostname: string, options: { all: true }) => Promise<LookupAddress[]>;

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

const ALLOWED_SCHEMES = new Set(['http:', 'https:']);

/** Parses and checks what can be checked without DNS. `what` starts the error message. */
export function parseImportUrl(raw: string, what = 'URL'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw notAllowed(`${what} ${JSON.stringify(shorten(raw))} is not a valid absolute URL`);
  }
  if (!ALLOWED_SCHEMES.has(url.protocol)) {
    throw notAllowed(`${what} is refused: the "${url.protocol}" scheme is not allowed (only http and https)`);
  }
  if (url.username !== '' || url.password !== '') {
    throw notAllowed(`${what} ${redact(url)} is refused: URLs with a user name or password are not allowed`);
  }
  return url;
}

/** The URL with any credentials taken out and cut to a readable length, for messages. */
export function redact(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return shorten(copy.href);
}

function shorten(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/** The host as a bare IP address if it is an IP literal (`[::1]` -> `::1`), else undefined. */
export function ipLiteral(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) === 0 ? undefined : host;
}

/**
 * Every address the URL's host stands for, each one checked. One disallowed address refuses the
 * whole URL: a name that resolves to a public and a private address must not be fetched, since the
 * connection could land on either.
 */
export async function resolveAllowed(
  url: URL,
  allowPrivate: boolean,
  lookup: LookupFunction,
  what = 'URL',
): Promise<ResolvedAddress[]> {
  const literal = ipLiteral(url);
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
  const resolved: ResolvedAddress[] = [];
  for (const { address } of found) {
    const verdict = checkAddress(address, allowPrivate);
    if (!verdict.allowed) {
      const via = literal === undefined ? `${url.hostname} resolves to ${address}, and ` : '';
      throw notAllowed(`${what} ${redact(url)} is refused: ${via}${verdict.reason}`);
    }
    // The family comes from the address itself, not from what the lookup claimed.
    resolved.push({ address, family: isIP(address) === 6 ? 6 : 4 });
  }
  return resolved;
}

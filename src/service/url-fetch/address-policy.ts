/**
 * Which IP addresses an import may connect to. Only public unicast addresses are allowed; with
 * `allowPrivate` (the service's --allow-private-urls, for local testing) loopback is allowed too, and
 * nothing else. IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64, 6to4) are judged by the IPv4
 * address inside them, since that is where a connection to them ends up.
 *
 * Addresses are parsed to bytes and matched against prefix tables rather than compared as text, so
 * every spelling of an address (`::ffff:7f00:1`, `::ffff:127.0.0.1`, `0:0:0:0:0:ffff:7f00:1`) gets
 * the same verdict.
 */
import { isIP } from 'node:net';

export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'embedded-non-public'
  | 'invalid';

export interface AddressClass {
  kind: AddressKind;
  /** Completes "<address> is ...", e.g. "a loopback address (127.0.0.0/8)". */
  description: string;
}

export type AddressVerdict = ({ allowed: true } | { allowed: false; reason: string }) & AddressClass;

interface Range {
  prefix: Uint8Array;
  bits: number;
  kind: Exclude<AddressKind, 'public' | 'embedded-non-public' | 'invalid'>;
  description: string;
}

function range(cidr: string, kind: Range['kind'], what: string): Range {
  const [address = '', bits = ''] = cidr.split('/');
  const prefix = parseAddress(address);
  if (!prefix) throw new Error(`bad range ${cidr}`);
  return { prefix, bits: Number(bits), kind, description: `${what} (${cidr})` };
}

// First match wins: the broadcast address comes before the 240/4 block that contains it.
const IPV4_RANGES: Range[] = [
  range('0.0.0.0/8', 'unspecified', 'a "this network" address'),
  range('10.0.0.0/8', 'private', 'a private address'),
  range('100.64.0.0/10', 'shared', 'a carrier-grade NAT address'),
  range('127.0.0.0/8', 'loopback', 'a loopback address'),
  range('169.254.0.0/16', 'link-local', 'a link-local address, where cloud metadata services live'),
  range('172.16.0.0/12', 'private', 'a private address'),
  range('192.0.0.0/24', 'reserved', 'an IETF protocol assignment address'),
  range('192.0.2.0/24', 'documentation', 'a documentation address'),
  range('192.88.99.0/24', 'reserved', 'a 6to4 relay anycast address'),
  range('192.168.0.0/16', 'private', 'a private address'),
  range('198.18.0.0/15', 'benchmarking', 'a benchmarking address'),
  range('198.51.100.0/24', 'documentation', 'a documentation address'),
  range('203.0.113.0/24', 'documentation', 'a documentation address'),
  range('224.0.0.0/4', 'multicast', 'a multicast address'),
  range('255.255.255.255/32', 'broadcast', 'the broadcast address'),
  range('240.0.0.0/4', 'reserved', 'a reserved address'),
];

// The IPv6 forms that embed an IPv4 address are handled before this table (see classifyIPv6).
const IPV6_RANGES: Range[] = [
  range('::/128', 'unspecified', 'the unspecified address'),
  range('::1/128', 'loopback', 'the loopback address'),
  range('64:ff9b:1::/48', 'private', 'a local-use NAT64 address'),
  range('100::/64', 'reserved', 'a discard-only address'),
  range('2001::/23', 'reserved', 'an IETF protocol assignment address (Teredo and others)'),
  range('2001:db8::/32', 'documentation', 'a documentation address'),
  range('3fff::/20', 'documentation', 'a documentation address'),
  range('fc00::/7', 'private', 'a unique local (private) address'),
  range('fe80::/10', 'link-local', 'a link-local address'),
  range('fec0::/10', 'private', 'a site-local (private) address'),
  range('ff00::/8', 'multicast', 'a multicast address'),
];

const GLOBAL_UNICAST_V6 = range('2000::/3', 'reserved', 'global unicast');
const MAPPED_V6 = range('::ffff:0:0/96', 'reserved', 'IPv4-mapped');
const NAT64_V6 = range('64:ff9b::/96', 'reserved', 'NAT64');
const SIX_TO_FOUR_V6 = range('2002::/16', 'reserved', '6to4');

/** Parses an IPv4 or IPv6 address (an IPv6 zone such as `%eth0` is dropped) to 4 or 16 bytes. */
export function parseAddress(text: string): Uint8Array | undefined {
  const address = text.replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 4) return Uint8Array.from(address.split('.').map(Number));
  if (family !== 6) return undefined;
  const groups = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (!group.includes('.')) return [Number.parseInt(group, 16)];
      const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const gap = address.indexOf('::');
  let all: number[];
  if (gap === -1) {
    all = groups(address);
  } else {
    const head = groups(address.slice(0, gap));
    const tail = groups(address.slice(gap + 2));
    all = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  }
  if (all.length !== 8) return undefined;
  return Uint8Array.from(all.flatMap((group) => [group >> 8, group & 0xff]));
}

function formatIPv4(bytes: Uint8Array): string {
  return Array.from(bytes).join('.');
}

function matches(bytes: Uint8Array, candidate: Range): boolean {
  if (bytes.length !== candidate.prefix.length) return false;
  const whole = Math.floor(candidate.bits / 8);
  for (let i = 0; i < whole; i++) if (bytes[i] !== candidate.prefix[i]) return false;
  const rest = candidate.bits % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((bytes[whole] ?? 0) & mask) === ((candidate.prefix[whole] ?? 0) & mask);
}

function classifyIPv4(bytes: Uint8Array): AddressClass {
  const found = IPV4_RANGES.find((candidate) => matches(bytes, candidate));
  return found ? { kind: found.kind, description: found.description } : { kind: 'public', description: 'public' };
}

/** An IPv6 form that carries an IPv4 address takes the IPv4 address's class. */
function classifyEmbedded(form: string, embedded: Uint8Array, keepLoopback: boolean): AddressClass {
  const inner = classifyIPv4(embedded);
  if (inner.kind === 'public') return inner;
  const description = `the ${form} form of ${formatIPv4(embedded)}, ${inner.description}`;
  // Only the IPv4-mapped form really is loopback (the kernel connects it to 127.x); a NAT64 or 6to4
  // address goes out to a gateway, so it never counts as loopback, even with allowPrivate.
  return { kind: keepLoopback ? inner.kind : 'embedded-non-public', description };
}

function classifyIPv6(bytes: Uint8Array): AddressClass {
  if (matches(bytes, MAPPED_V6)) return classifyEmbedded('IPv4-mapped', bytes.subarray(12), true);
  if (matches(bytes, NAT64_V6)) return classifyEmbedded('NAT64', bytes.subarray(12), false);
  if (matches(bytes, SIX_TO_FOUR_V6)) return classifyEmbedded('6to4', bytes.subarray(2, 6), false);
  const found = IPV6_RANGES.find((candidate) => matches(bytes, candidate));
  if (found) return { kind: found.kind, description: found.description };
  if (matches(bytes, GLOBAL_UNICAST_V6)) return { kind: 'public', description: 'public' };
  return { kind: 'reserved', description: 'outside the global unicast range (2000::/3)' };
}

export function classifyAddress(address: string): AddressClass {
  const bytes = parseAddress(address);
  if (!bytes) return { kind: 'invalid', description: 'not an IP address' };
  return bytes.length === 4 ? classifyIPv4(bytes) : classifyIPv6(bytes);
}

/** Whether a connection to `address` is allowed, and if not, a sentence saying why. */
export function checkAddress(address: string, allowPrivate: boolean): AddressVerdict {
  const found = classifyAddress(address);
  if (found.kind === 'public' || (found.kind === 'loopback' && allowPrivate)) return { allowed: true, ...found };
  let reason = `${address} is ${found.description}`;
  if (found.kind === 'loopback') reason += '; loopback is allowed only when the service runs with --allow-private-urls';
  return { allowed: false, reason, ...found };
}

/** Whether two spellings name the same address (an IPv4-mapped IPv6 address equals its IPv4 form). */
export function sameAddress(a: string, b: string): boolean {
  const unmap = (bytes: Uint8Array | undefined) =>
    bytes && bytes.length === 16 && matches(bytes, MAPPED_V6) ? bytes.subarray(12) : bytes;
  const x = unmap(parseAddress(a));
  const y = unmap(parseAddress(b));
  return x !== undefined && y !== undefined && x.length === y.length && x.every((byte, i) => byte === y[i]);
}

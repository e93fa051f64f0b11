/**
 * An import may connect to public unicast addresses, and with `allowPrivate` to loopback. IPv6 forms that
 * carry an IPv4 address (IPv4-mapped, NAT64, 6to4) are judged by that address, where a connection ends up.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface AddressClass {
  /**
   * `public`, the special-purpose range ipaddr.js names (`loopback`, `private`, `linkLocal`, ...),
   * `embedded-non-public` (a NAT64 or 6to4 form of a non-public IPv4 address), or `invalid`.
   */
  kind: string;
  /** Completes "<address> is ...", e.g. "a loopback address (127.0.0.0/8)". */
  description: string;
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** How messages name ipaddr.js's ranges; others read "a special-purpose address (<name>)". */
const NAMES: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  loopback: 'a loopback address',
  private: 'a private address',
  reserved: 'a reserved address',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique local (private) address (fc00::/7)',
  deprecatedSiteLocal: 'a site-local (private) address (fec0::/10)',
  rfc6052: 'a local-use NAT64 address (64:ff9b:1::/48)',
  teredo: 'a Teredo address (2001::/32)',
};
const V4_NAMES: Record<string, string> = {
  loopback: 'a loopback address (127.0.0.0/8)',
  linkLocal: 'a link-local address, where cloud metadata services live (169.254.0.0/16)',
  unspecified: 'a "this network" address (0.0.0.0/8)',
};

const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

function named(range: string, ipv4: boolean): AddressClass {
  const description = (ipv4 ? V4_NAMES[range] : undefined) ?? NAMES[range] ?? `a special-purpose address (${range})`;
  return { kind: range, description };
}

function classifyIPv4(address: ipaddr.IPv4): AddressClass {
  const range = address.range();
  return range === 'unicast' ? { kind: 'public', description: 'public' } : named(range, true);
}

/** An IPv6 form that carries an IPv4 address takes the IPv4 address's class. */
function classifyEmbedded(form: string, embedded: ipaddr.IPv4, keepLoopback: boolean): AddressClass {
  const inner = classifyIPv4(embedded);
  if (inner.kind === 'public') return inner;
  const description = `the ${form} form of ${embedded.toString()}, ${inner.description}`;
  // Only the IPv4-mapped form really is loopback (the kernel connects it to 127.x); a NAT64 or 6to4
  // address goes out to a gateway, so it never counts as loopback, even with allowPrivate.
  return { kind: keepLoopback ? inner.kind : 'embedded-non-public', description };
}

function classifyIPv6(address: ipaddr.IPv6): AddressClass {
  const bytes = address.toByteArray();
  const ipv4 = (at: number) => new ipaddr.IPv4(bytes.slice(at, at + 4));
  const range = address.range();
  if (range === 'ipv4Mapped') return classifyEmbedded('IPv4-mapped', address.toIPv4Address(), true);
  if (address.match(NAT64)) return classifyEmbedded('NAT64', ipv4(12), false);
  if (range === '6to4') return classifyEmbedded('6to4', ipv4(2), false);
  if (range !== 'unicast') return named(range, false);
  if (address.match(GLOBAL_UNICAST)) return { kind: 'public', description: 'public' };
  return { kind: 'reserved', description: 'outside the global unicast range (2000::/3)' };
}

/**
 * Node's check first: only the dotted IPv4 form and IPv6 (ipaddr.js also reads `0x7f.1` or `2130706433`).
 * ipaddr.js reads the deprecated IPv4-compatible `::a.b.c.d` as IPv4-mapped (`::ffff:a.b.c.d`), while
 * `::7f00:1`, the same address, stays IPv4-compatible: written `::0:a.b.c.d`, both read alike.
 */
function parse(address: string): Address | undefined {
  if (isIP(address) === 0) return undefined;
  return ipaddr.parse(address.replace(/^::(?=\d+\.\d+\.\d+\.\d+(%.*)?$)/, '::0:'));
}

export function classifyAddress(address: string): AddressClass {
  const parsed = parse(address);
  if (parsed === undefined) return { kind: 'invalid', description: 'not an IP address' };
  return parsed.kind() === 'ipv4' ? classifyIPv4(parsed as ipaddr.IPv4) : classifyIPv6(parsed as ipaddr.IPv6);
}

export function checkAddress(address: string, allowPrivate: boolean) {
  const found = classifyAddress(address);
  if (found.kind === 'public' || (found.kind === 'loopback' && allowPrivate))
    return { allowed: true as const, ...found };
  let reason = `${address} is ${found.description}`;
  if (found.kind === 'loopback') reason += '; loopback is allowed only when the service runs with --allow-private-urls';
  return { allowed: false as const, reason, ...found };
}

/** Whether two spellings name the same address (an IPv4-mapped IPv6 address equals its IPv4 form). */
export function sameAddress(a: string, b: string): boolean {
  const unmap = (address: Address | undefined) =>
    address?.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
      ? (address as ipaddr.IPv6).toIPv4Address()
      : address;
  const [x, y] = [unmap(parse(a)), unmap(parse(b))];
  return x !== undefined && y !== undefined && x.toString() === y.toString();
}

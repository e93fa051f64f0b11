import ipaddr from 'ipaddr.js';
import { UsageError } from '../errors.js';
import { isIpLiteral, isLoopbackHost } from './error-mapping.js';

/**
 * Which proxy a base URL goes through (not undici's EnvHttpProxyAgent: docs/decisions.md). HTTP(S)_PROXY
 * as curl reads them: lower case first, the URL's scheme's only. Never for a loopback base URL: plain
 * http is allowed there only because the key stays on the machine. NO_PROXY as Go reads it: `*`; an IP
 * address or CIDR range; `example.com` and its subdomains, `.example.com` or `*.example.com` for
 * subdomains only; each with an optional :port.
 */

/** `variable`: the one it came from; `shown`: the URL without user name or password. */
export type ProxyChoice = { url: URL; variable: string; shown: string };

type Env = Readonly<Record<string, string | undefined>>;

/** The proxy variable that applies to the URL's scheme (lower case first), if one is set. */
export function proxyVariable(target: URL, env: Env): [name: string, value: string] | undefined {
  const names = target.protocol === 'https:' ? ['https_proxy', 'HTTPS_PROXY'] : ['http_proxy', 'HTTP_PROXY'];
  const name = names.find((candidate) => (env[candidate] ?? '') !== '');
  return name === undefined ? undefined : [name, env[name] as string];
}

export function proxyFor(target: URL, env: Env): ProxyChoice | undefined {
  const variable = proxyVariable(target, env);
  if (variable === undefined || isLoopbackHost(target.hostname)) return undefined;
  if (noProxyEntry(target, env.no_proxy ?? env.NO_PROXY ?? '') !== undefined) return undefined;
  const [name, value] = variable;
  const href = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  const url = URL.parse(href);
  if (!url)
    throw new UsageError(`${name} is not a valid proxy URL: ${value}`, { hint: 'e.g. http://proxy.example:3128' });
  if (url.protocol.startsWith('socks')) {
    throw new UsageError(`${name}: SOCKS proxies are not supported (${url.protocol}//${url.host})`, {
      code: 'unsupported_proxy',
      hint: `use an HTTP proxy that accepts CONNECT, or unset ${name}`,
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${name}: unsupported proxy scheme ${url.protocol} (use http:// or https://)`, {
      code: 'unsupported_proxy',
    });
  }
  return { url, variable: name, shown: `${url.protocol}//${url.host}` };
}

/** The NO_PROXY entry that sends the URL around the proxy, if any (entries split at commas and spaces). */
export function noProxyEntry(target: URL, noProxy: string): string | undefined {
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  const address = isIpLiteral(host) ? ipaddr.process(host) : undefined;
  for (const entry of noProxy.toLowerCase().split(/[\s,]+/)) {
    if (entry === '') continue;
    if (entry === '*') return entry;
    if (entry.includes('/')) {
      if (address && ipaddr.isValidCIDR(entry)) {
        const [range, bits] = ipaddr.parseCIDR(entry);
        // An IPv4 range also covers the IPv4-mapped spelling of its addresses (process() above).
        if (range.kind() === address.kind() && address.match(range, bits)) return entry;
      }
      continue;
    }
    // host, host:port, [v6]:port; an IPv6 address without brackets has no port.
    const [, name = '', only] = /^\[([^\]]*)\](?::(\d+))?$/.exec(entry) ?? /^([^:]*):(\d+)$/.exec(entry) ?? ['', entry];
    if (only !== undefined && only !== port) continue;
    if (isIpLiteral(name)) {
      if (address && address.toString() === ipaddr.process(name).toString()) return entry;
      continue;
    }
    const domain = name.replace(/^\*\./, '.');
    if (domain === '' || domain === '.') continue;
    if (domain.startsWith('.') ? host.endsWith(domain) : host === domain || host.endsWith(`.${domain}`)) return entry;
  }
  return undefined;
}

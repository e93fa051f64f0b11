import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { UsageError } from '../errors.js';

/**
 * HTTP(S)_PROXY support: which proxy a base URL goes through, and a small CONNECT tunnel that undici's
 * Pool uses as its connector. Every failure of the proxy (refused, closed on CONNECT, a 403/407 answer,
 * no answer in time) is a ProxyError naming the proxy, never the service, and ends the request at once:
 * nothing is retried in a loop.
 *
 * The variables are read as curl and undici read them: the lower-case name wins over the upper-case one;
 * an https base URL uses https_proxy/HTTPS_PROXY only, an http one http_proxy/HTTP_PROXY only;
 * no_proxy/NO_PROXY lists hosts (`*` for all, `example.com` also for its subdomains, an optional :port)
 * reached directly. Loopback addresses are not exempt by themselves (as in curl): list them in NO_PROXY.
 */

export interface ProxyChoice {
  url: URL;
  /** The variable it came from, for messages. */
  variable: string;
  /** The proxy as shown in messages: without user name or password. */
  shown: string;
}

type Env = Readonly<Record<string, string | undefined>>;

export function proxyFor(target: URL, env: Env): ProxyChoice | undefined {
  const names = target.protocol === 'https:' ? ['https_proxy', 'HTTPS_PROXY'] : ['http_proxy', 'HTTP_PROXY'];
  const variable = names.find((name) => (env[name] ?? '') !== '');
  if (variable === undefined) return undefined;
  if (bypassed(target, env.no_proxy ?? env.NO_PROXY ?? '')) return undefined;
  const value = env[variable] as string;
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    throw new UsageError(`${variable} is not a valid proxy URL: ${value}`, { hint: 'e.g. http://proxy.example:3128' });
  }
  if (url.protocol.startsWith('socks')) {
    throw new UsageError(`${variable}: SOCKS proxies are not supported (${url.protocol}//${url.host})`, {
      code: 'unsupported_proxy',
      hint: `use an HTTP proxy that accepts CONNECT, or unset ${variable}`,
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${variable}: unsupported proxy scheme ${url.protocol} (use http:// or https://)`, {
      code: 'unsupported_proxy',
    });
  }
  return { url, variable, shown: `${url.protocol}//${url.host}` };
}

/** NO_PROXY: `*`, or host names/addresses (a leading `.` or `*.` allowed), each optionally with :port. */
function bypassed(target: URL, noProxy: string): boolean {
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    const match = /^(?:\[([^\]]+)\]|([^:]+|[0-9a-f:]+))(?::(\d+))?$/.exec(entry);
    const name = (match?.[1] ?? match?.[2] ?? entry).replace(/^\*?\./, '');
    if (match?.[3] !== undefined && match[3] !== port) continue;
    if (host === name || host.endsWith(`.${name}`)) return true;
  }
  return false;
}

/** A failure of the proxy itself; networkErrorFrom turns it into exit 8 with this message. */
export class ProxyError extends Error {
  readonly code = 'FACECTL_PROXY';
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'ProxyError';
  }
}

interface ConnectOptions {
  hostname: string;
  protocol: string;
  port: string;
  servername?: string;
}
type Callback = (...args: [null, Socket | TLSSocket] | [Error, null]) => void;

/** Headers of a CONNECT answer longer than this are not a proxy's. */
const MAX_HEAD = 16 * 1024;

/**
 * An undici connector that reaches each origin through a CONNECT tunnel of the proxy, then speaks TLS
 * inside it for https origins. `timeoutMs` bounds everything up to a usable socket.
 */
export function tunnelConnector(proxy: ProxyChoice, timeoutMs: number) {
  return (options: ConnectOptions, callback: Callback): void => {
    const net = process.getBuiltinModule('node:net');
    const tls = process.getBuiltinModule('node:tls');
    const targetHost = options.hostname.includes(':') ? `[${options.hostname}]` : options.hostname;
    const authority = `${targetHost}:${options.port || (options.protocol === 'https:' ? '443' : '80')}`;
    const proxyPort = Number(proxy.url.port || (proxy.url.protocol === 'https:' ? 443 : 80));
    const proxyHost = proxy.url.hostname.replace(/^\[|\]$/g, '');
    const raw: Socket =
      proxy.url.protocol === 'https:'
        ? tls.connect({ host: proxyHost, port: proxyPort, servername: net.isIP(proxyHost) ? '' : proxyHost })
        : net.connect({ host: proxyHost, port: proxyPort });
    let settled = false;
    const fail = (message: string, hint: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      raw.destroy();
      callback(new ProxyError(message, hint), null);
    };
    const where = `the proxy ${proxy.shown} (${proxy.variable})`;
    const timer = setTimeout(
      () => fail(`${where} did not answer the CONNECT to ${authority} within ${timeoutMs / 1000} s`, checkProxy),
      timeoutMs,
    );
    const checkProxy = `check ${proxy.variable}, or list the host in NO_PROXY to reach it directly`;

    raw.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'ECONNREFUSED' ? 'connection refused' : (error.code ?? error.message);
      fail(`cannot reach ${where}: ${why}`, checkProxy);
    });
    raw.once('close', () => fail(`${where} closed the connection on the CONNECT to ${authority}`, checkProxy));

    const onReady = () => {
      const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
      if (proxy.url.username || proxy.url.password) {
        const credentials = `${decodeURIComponent(proxy.url.username)}:${decodeURIComponent(proxy.url.password)}`;
        lines.push(`Proxy-Authorization: Basic ${Buffer.from(credentials).toString('base64')}`);
      }
      raw.write(`${lines.join('\r\n')}\r\n\r\n`);
    };
    if (proxy.url.protocol === 'https:') raw.once('secureConnect', onReady);
    else raw.once('connect', onReady);

    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > MAX_HEAD) fail(`${where} answered the CONNECT with something that is not HTTP`, checkProxy);
        return;
      }
      raw.off('data', onData);
      const statusLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
      if (status === undefined || !status.startsWith('2')) {
        const said = status ? statusLine.replace(/^HTTP\/1\.[01] /, '') : 'something that is not HTTP';
        fail(
          `${where} refused the tunnel to ${authority}: ${said}`,
          status === '407'
            ? `the proxy wants credentials: put them in ${proxy.variable} (http://user:password@host:port)`
            : checkProxy,
        );
        return;
      }
      const rest = head.subarray(end + 4);
      // Paused so that nothing the origin sends is lost before undici reads the socket.
      raw.pause();
      if (rest.length > 0) raw.unshift(rest);
      raw.removeAllListeners('close');
      raw.removeAllListeners('error');
      if (options.protocol !== 'https:') return done(raw);
      const secure = tls.connect({
        socket: raw,
        servername: options.servername ?? (net.isIP(options.hostname) ? '' : options.hostname),
        ALPNProtocols: ['http/1.1'],
      });
      secure.once('error', (error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        secure.destroy();
        callback(error, null);
      });
      secure.once('secureConnect', () => done(secure));
    };
    raw.on('data', onData);

    const done = (socket: Socket | TLSSocket) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.removeAllListeners('error');
      callback(null, socket);
    };
  };
}

/** One HTTP GET to a checked address: a seam, so tests prove refused addresses never get this far. */
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';

export interface ConnectRequest {
  /** The checked URL; its host names the server (Host header, TLS name) but is not looked up again. */
  url: URL;
  address: string;
  family: 4 | 6;
  headers: Record<string, string>;
  signal: AbortSignal;
}

export interface ConnectResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The socket's peer once it connected; the caller checks it. */
  remoteAddress: string | undefined;
  body: AsyncIterable<Uint8Array>;
  /** Drops the connection; safe to call more than once and after the body is read. */
  close(): void;
}

export type ConnectStep = (request: ConnectRequest) => Promise<ConnectResponse>;

/**
 * Pinned to the checked address: the host name still goes into Host and TLS (SNI, certificate), but the socket's
 * `lookup` answers with the checked address only (no DNS rebinding). `agent: false`: no pooled sockets, no proxy.
 */
export const connectPinned: ConnectStep = (request) =>
  new Promise<ConnectResponse>((resolve, reject) => {
    const { url, address, family } = request;
    const pinnedLookup = (_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      if (options?.all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const client = url.protocol === 'https:' ? https : http;
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const req = client.request({
      protocol: url.protocol,
      hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { ...request.headers, host: url.host },
      lookup: pinnedLookup as never,
      agent: false,
      signal: request.signal,
    });
    // Read at connect time: once the server has closed the socket, node cannot tell its peer any more.
    let connectedTo: string | undefined;
    req.on('socket', (socket) => socket.once('connect', () => (connectedTo = socket.remoteAddress)));
    req.on('error', reject);
    req.on('response', (res) => {
      // Later errors (reset, abort) surface through the body: this keeps an unread one's 'error' from going uncaught.
      res.on('error', () => {});
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        remoteAddress: connectedTo ?? res.socket?.remoteAddress,
        body: res,
        close: () => {
          res.destroy();
          req.destroy();
        },
      });
    });
    req.end();
  });

/**
 * The connect step: one HTTP GET to an address that has already been checked. It is a seam so tests
 * can prove that refused addresses never get this far (a spy in its place).
 */

import type { LookupAddress } from 'node:dns';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';

export interface ConnectRequest {
  /** The checked URL; its host names the server (Host header, TLS name) but is not looked up again. */
  url: URL;
  /** The checked address to connect to. */
  address: string;
  family: 4 | 6;
  headers: Record<string, string>;
  signal: AbortSignal;
}

export interface ConnectResponse {
  status: number;
  /** Header names in lower case, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** The peer address of the socket, as seen once it connected; checked again by the caller. */
  remoteAddress: string | undefined;
  body: AsyncIterable<Uint8Array>;
  /** Drops the connection; safe to call more than once and after the body is read. */
  close(): void;
}

export type ConnectStep = (request: ConnectRequest) => Promise<ConnectResponse>;

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * node:http/https request pinned to the checked address. The URL's host name still goes into the Host
 * header and TLS (SNI and certificate check), but the `lookup` handed to the socket answers with the
 * checked address only, so a DNS answer that changes between our check and the connection (DNS
 * rebinding) cannot redirect it. `agent: false` keeps pooled sockets and any proxy settings out of it.
 */
export const connectPinned: ConnectStep = (request) =>
  new Promise<ConnectResponse>((resolve, reject) => {
    const { url, address, family } = request;
    const pinnedLookup = (_hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
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
      // Errors after this point (reset, abort) surface through reading the body; this listener only
      // keeps an unread, aborted response from becoming an uncaught 'error' event.
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

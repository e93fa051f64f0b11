// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient types for the undici sub-paths this file imports
/// <reference path="./undici-parts.d.ts" />
import type { Dispatcher } from 'undici';
import request from 'undici/lib/api/api-request.js';
import Pool from 'undici/lib/dispatcher/pool.js';
import type { Limits, Sender, WireRequest, WireResponse } from './node-http.js';

/**
 * undici, for what the transport sends through it: requests that overlap (a batch, up to
 * --concurrency at once, each connection kept alive) and requests through a proxy (proxy-agent.ts).
 * Imported on first use: a command that sends one request at a time never loads it (node-http.ts).
 */

/** What every undici dispatcher of the transport is built with. */
export function dispatcherOptions(limits: Limits) {
  return {
    headersTimeout: limits.headersMs,
    bodyTimeout: limits.bodyMs,
    keepAliveTimeout: 10_000,
    connections: 64,
    pipelining: 1,
  };
}

/** A Pool of keep-alive connections to `origin`, for requests that overlap. */
export function pooled(origin: string, limits: Limits): Sender {
  return new UndiciSender(new Pool(origin, { ...dispatcherOptions(limits), connect: { timeout: limits.connectMs } }));
}

/** Requests through `dispatcher` (the Pool above, or proxy-agent.ts's ProxyAgent). */
export class UndiciSender implements Sender {
  constructor(private readonly dispatcher: Dispatcher) {}

  send(wire: WireRequest): Promise<WireResponse> {
    return sendVia(this.dispatcher, wire);
  }

  destroy(reason: Error): void {
    this.dispatcher.destroy(reason).catch(() => undefined);
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

async function sendVia(dispatcher: Dispatcher, wire: WireRequest): Promise<WireResponse> {
  const response = await request.call(dispatcher, {
    origin: wire.origin,
    path: wire.path,
    method: wire.method as Dispatcher.HttpMethod,
    headers: wire.headers,
    ...(wire.body === undefined ? {} : { body: wire.body as Dispatcher.DispatchOptions['body'] }),
    signal: wire.signal,
  });
  return {
    statusCode: response.statusCode,
    ...(response.statusText ? { statusText: response.statusText } : {}),
    headers: response.headers,
    body: response.body,
  };
}

// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient types for the undici sub-paths this file imports
/// <reference path="./undici-parts.d.ts" />
import type { Socket } from 'node:net';
import type { Dispatcher, Pool as UndiciPool, ProxyAgent as UndiciProxyAgent } from 'undici';
import apiConnect from 'undici/lib/api/api-connect.js';
import apiRequest from 'undici/lib/api/api-request.js';
import proxyAgent from 'undici/lib/dispatcher/proxy-agent.js';
import pool from 'undici/lib/dispatcher/pool.js';
import { errorCode } from './error-mapping.js';
import type { Limits, Sender, WireRequest, WireResponse } from './node-http.js';
import type { ProxyChoice } from './proxy.js';

const ProxyAgent = proxyAgent as typeof UndiciProxyAgent;
const Pool = pool as typeof UndiciPool;
/** Dispatcher.prototype.request and connect, called with the dispatcher as `this`. */
type Method<Options, Answer> = (this: Dispatcher, options: Options) => Promise<Answer>;
const request = apiRequest as Method<Dispatcher.RequestOptions, Dispatcher.ResponseData>;
const connect = apiConnect as Method<Dispatcher.ConnectOptions, Dispatcher.ConnectData>;

/**
 * A base URL behind a proxy: undici's ProxyAgent (a CONNECT tunnel per connection), loaded only then.
 * Its CONNECT goes through proxyClient, so every failure of the proxy is a proxyError naming it that
 * ends the request: undici reconnects in a loop after a plain socket error during connect. A
 * `100 Continue` fails a request here (docs/decisions.md).
 */
export function proxySender(proxy: ProxyChoice, limits: Limits, fastExit = false): Sender {
  // Before undici compiles its parser, at the first connection (TransportOptions.fastExit).
  if (fastExit) process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only');
  const timeoutMs = limits.connectMs;
  const agent: Dispatcher = new ProxyAgent({
    headersTimeout: limits.headersMs,
    bodyTimeout: limits.bodyMs,
    keepAliveTimeout: 10_000,
    connections: 64,
    pipelining: 1,
    uri: proxy.url.href,
    requestTls: { timeout: timeoutMs },
    clientFactory: (url: URL) => proxyClient(url, proxy, timeoutMs) as unknown as Dispatcher,
  });
  return {
    send: async (wire: WireRequest): Promise<WireResponse> => {
      const controller = new AbortController();
      // unref: an open socket keeps the process alive while it matters; the timer alone must not.
      const overall = setTimeout(() => {
        wire.deadline.passed = true;
        controller.abort(new Error('deadline'));
      }, wire.deadline.ms).unref();
      const signal = wire.signal ? AbortSignal.any([wire.signal, controller.signal]) : controller.signal;
      const { statusCode, statusText, headers, body } = await request
        .call(agent, {
          origin: wire.origin,
          path: wire.path,
          method: wire.method as Dispatcher.HttpMethod,
          headers: wire.headers,
          ...(wire.body === undefined ? {} : { body: wire.body as Dispatcher.DispatchOptions['body'] }),
          signal,
        })
        .catch((error: unknown) => {
          clearTimeout(overall);
          throw error;
        });
      // The deadline covers the answer's body too: stopped once it is read (or ended).
      body.once('close', () => clearTimeout(overall));
      return { statusCode, ...(statusText ? { statusText } : {}), headers, body };
    },
    destroy: (reason) => void agent.destroy(reason).catch(() => undefined),
    close: () => agent.close(),
  };
}

/** What ProxyAgent asks of the client to the proxy: connect, close, destroy. */
function proxyClient(url: URL, proxy: ProxyChoice, timeoutMs: number) {
  const pool = new Pool(url, { connect: { timeout: timeoutMs }, headersTimeout: timeoutMs });
  const where = `the proxy ${proxy.shown} (${proxy.variable})`;
  const check = `check ${proxy.variable}, or list the host in NO_PROXY to reach it directly`;
  return {
    async connect(params: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData> {
      const authority = params.path;
      const answer = await connect.call(pool, params).catch((error: unknown) => {
        const code = errorCode(error);
        const seconds = `${timeoutMs / 1000} s`;
        const why: Record<string, string> = {
          UND_ERR_HEADERS_TIMEOUT: `${where} did not answer the CONNECT to ${authority} within ${seconds}`,
          UND_ERR_SOCKET: `${where} closed the connection on the CONNECT to ${authority}`,
          UND_ERR_CONNECT_TIMEOUT: `cannot reach ${where}: no connection within ${seconds}`,
          ECONNREFUSED: `cannot reach ${where}: connection refused`,
        };
        throw proxyError(why[code ?? ''] ?? `cannot reach ${where}: ${code ?? (error as Error).message}`, check);
      });
      if (answer.statusCode === 200) return answer;
      (answer.socket as Socket).on('error', () => undefined).destroy();
      const reason = process.getBuiltinModule('node:http').STATUS_CODES[answer.statusCode];
      throw proxyError(
        `${where} refused the tunnel to ${authority}: ${answer.statusCode}${reason ? ` ${reason}` : ''}`,
        answer.statusCode === 407
          ? `the proxy wants credentials: put them in ${proxy.variable} (http://user:password@host:port)`
          : check,
      );
    },
    close: () => pool.close(),
    destroy: (error?: Error) => pool.destroy(error ?? null),
  };
}

/** A failure of the proxy itself; networkErrorFrom turns its code into exit 8 with this message and hint. */
const proxyError = (message: string, hint: string): Error =>
  Object.assign(new Error(message), { code: 'FACECTL_PROXY', hint });

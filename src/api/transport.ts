// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient types for the undici sub-paths this file imports
/// <reference path="./undici-parts.d.ts" />
import { randomInt } from 'node:crypto';
import type { Dispatcher } from 'undici';
import request from 'undici/lib/api/api-request.js';
import Pool from 'undici/lib/dispatcher/pool.js';
import { CancelError, ResponseError } from '../errors.js';
import { type ExchangeInfo, errorCode, isRetryableNetworkError, networkErrorFrom } from './error-mapping.js';

/**
 * The HTTP layer under the API client: one undici Pool per client (one client per process) with
 * keep-alive, or undici's EnvHttpProxyAgent when a proxy is configured; timeouts; retries with backoff
 * and Retry-After; a response size cap; --debug traces with the Authorization header redacted.
 */

export interface TransportOptions {
  baseUrl: URL;
  env: Readonly<Record<string, string | undefined>>;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxResponseBytes?: number;
  maxRetries?: number;
  /** Retry-After longer than this gives up at once and says when to retry. */
  maxRetryAfterMs?: number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** --debug: receives one trace line at a time (stderr). */
  debug?: (line: string) => void;
  /** Strings that must never appear in a trace (the key). */
  secrets?: () => string[];
}

export interface Exchange {
  method: string;
  /** Path (with query) relative to the origin, base path included. */
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | (() => AsyncIterable<Uint8Array>) | AsyncIterable<Uint8Array>;
  /** May the request be sent again after a 5xx or a dropped connection (GET, DELETE, idempotency key)? */
  repeatable: boolean;
  signal: AbortSignal;
  info: ExchangeInfo;
}

export interface ExchangeResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Seconds from Retry-After when the answer carried one. */
  retryAfterSeconds?: number;
}

const RETRY_STATUSES = new Set([500, 502, 503, 504]);

export class Transport {
  readonly limits: { connectMs: number; headersMs: number; bodyMs: number };
  private readonly dispatcher: Promise<Dispatcher>;
  private readonly origin: string;

  constructor(private readonly options: TransportOptions) {
    const seconds = Number(options.env.FACECTL_HTTP_TIMEOUT);
    const fromEnv = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
    this.limits = {
      connectMs: options.connectTimeoutMs ?? 10_000,
      headersMs: options.headersTimeoutMs ?? fromEnv ?? 30_000,
      bodyMs: options.bodyTimeoutMs ?? fromEnv ?? 60_000,
    };
    this.origin = options.baseUrl.origin;
    const common = {
      connect: { timeout: this.limits.connectMs },
      headersTimeout: this.limits.headersMs,
      bodyTimeout: this.limits.bodyMs,
      keepAliveTimeout: 10_000,
    };
    const env = options.env;
    const httpProxy = env.HTTP_PROXY ?? env.http_proxy;
    const httpsProxy = env.HTTPS_PROXY ?? env.https_proxy;
    // The proxy agent is imported only when a proxy is configured.
    this.dispatcher =
      httpProxy || httpsProxy
        ? loadProxyAgent().then(
            (EnvHttpProxyAgent) =>
              new EnvHttpProxyAgent({
                ...common,
                ...(httpProxy ? { httpProxy } : {}),
                ...(httpsProxy ? { httpsProxy } : {}),
                noProxy: env.NO_PROXY ?? env.no_proxy ?? '',
              }),
          )
        : Promise.resolve(new Pool(this.origin, { ...common, connections: 64, pipelining: 1 }));
  }

  async send(exchange: Exchange): Promise<ExchangeResult> {
    const maxRetries = this.options.maxRetries ?? 3;
    const maxRetryAfterMs = this.options.maxRetryAfterMs ?? 30_000;
    // A bare stream can be read once: such a request is never repeated.
    const canRepeat = isResendable(exchange.body);
    for (let attempt = 0; ; attempt++) {
      let result: ExchangeResult;
      try {
        result = await this.once(exchange, attempt);
      } catch (error) {
        if (exchange.signal.aborted) throw abortReason(exchange.signal);
        if (error instanceof ResponseError) throw error;
        if (exchange.repeatable && canRepeat && attempt < maxRetries && isRetryableNetworkError(error)) {
          await this.wait(backoff(attempt), `connection dropped (${errorCode(error)})`, exchange.signal);
          continue;
        }
        throw networkErrorFrom(error, exchange.info, this.limits);
      }
      // 429 means the request was not processed, so any method may be sent again; 5xx only repeatable ones.
      const retryable =
        canRepeat && (result.status === 429 || (RETRY_STATUSES.has(result.status) && exchange.repeatable));
      if (!retryable || attempt >= maxRetries) return result;
      if (result.retryAfterSeconds !== undefined && result.retryAfterSeconds * 1000 > maxRetryAfterMs) return result;
      const delay = result.retryAfterSeconds !== undefined ? result.retryAfterSeconds * 1000 : backoff(attempt);
      await this.wait(delay, `status ${result.status}`, exchange.signal);
    }
  }

  async close(): Promise<void> {
    await (await this.dispatcher).close();
  }

  private async wait(ms: number, why: string, signal: AbortSignal): Promise<void> {
    this.trace(`* ${why}; retrying in ${Math.round(ms)} ms`);
    await this.options.sleep(ms, signal);
    if (signal.aborted) throw abortReason(signal);
  }

  private async once(exchange: Exchange, attempt: number): Promise<ExchangeResult> {
    const started = performance.now();
    const url = `${this.origin}${exchange.path}`;
    this.trace(`> ${exchange.method} ${url}${attempt > 0 ? ` (retry ${attempt})` : ''}`);
    for (const [name, value] of Object.entries(exchange.headers)) this.trace(`> ${name}: ${this.redact(name, value)}`);
    const body = typeof exchange.body === 'function' ? exchange.body() : exchange.body;
    const response = await request.call(await this.dispatcher, {
      origin: this.origin,
      path: exchange.path,
      method: exchange.method as Dispatcher.HttpMethod,
      headers: exchange.headers,
      ...(body === undefined ? {} : { body: body as Dispatcher.DispatchOptions['body'] }),
      signal: exchange.signal,
    });
    this.trace(`< ${response.statusCode} (${Math.round(performance.now() - started)} ms)`);
    for (const [name, value] of Object.entries(response.headers)) this.trace(`< ${name}: ${String(value)}`);
    const bytes = await this.readCapped(response.body, exchange.info);
    const retryAfterSeconds = parseRetryAfter(response.headers['retry-after']);
    return {
      status: response.statusCode,
      headers: response.headers,
      body: bytes,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    };
  }

  /** Reads the body, aborting past the cap so a huge or endless answer cannot exhaust memory. */
  private async readCapped(body: AsyncIterable<Buffer> & { destroy(error?: Error): void }, info: ExchangeInfo) {
    const cap = this.options.maxResponseBytes ?? 64 * 1024 * 1024;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > cap) {
        body.destroy();
        throw new ResponseError(
          `the response of ${info.method} ${info.path} is larger than ${Math.round(cap / 1024 / 1024)} MiB; aborted`,
          { code: 'response_too_large' },
        );
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size);
  }

  private redact(name: string, value: string): string {
    if (name.toLowerCase() === 'authorization') return value.replace(/^(\S+)\s.*$/, '$1 [redacted]');
    let shown = value;
    for (const secret of this.options.secrets?.() ?? []) if (secret) shown = shown.split(secret).join('[redacted]');
    return shown;
  }

  private trace(line: string): void {
    if (!this.options.debug) return;
    let shown = line;
    for (const secret of this.options.secrets?.() ?? []) if (secret) shown = shown.split(secret).join('[redacted]');
    this.options.debug(shown);
  }
}

/**
 * The proxy agent tunnels with `client.connect`, one of the methods undici's index mixes into every
 * dispatcher; loading the agent without the index means doing that mixing here, as the index does.
 */
async function loadProxyAgent() {
  const [{ default: EnvHttpProxyAgent }, { default: DispatcherClass }, { default: api }] = await Promise.all([
    import('undici/lib/dispatcher/env-http-proxy-agent.js'),
    import('undici/lib/dispatcher/dispatcher.js'),
    import('undici/lib/api/index.js'),
  ]);
  Object.assign(DispatcherClass.prototype, api);
  return EnvHttpProxyAgent;
}

function isResendable(body: Exchange['body']): boolean {
  return body === undefined || typeof body === 'string' || body instanceof Uint8Array || typeof body === 'function';
}

/** Exponential backoff with jitter: ~250 ms, 500 ms, 1 s ... capped at 4 s, each scaled by 0.5-1.0. */
function backoff(attempt: number): number {
  const base = Math.min(4000, 250 * 2 ** attempt);
  return base * (0.5 + randomInt(0, 1000) / 2000);
}

/** Retry-After as whole seconds: either delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw.trim() === '') return undefined;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error && signal.reason.name === 'CancelError' ? signal.reason : new CancelError();
}

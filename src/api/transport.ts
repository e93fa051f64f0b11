import type { Readable } from 'node:stream';
import { CancelError, cancelledBy, CliError, ExitCode, NetworkError, ResponseError, UsageError } from '../errors.js';
import {
  type ExchangeInfo,
  errorCode,
  formatLimit,
  isRetryableNetworkError,
  networkErrorFrom,
} from './error-mapping.js';
import type { LargeStrings } from './large-strings.js';
import { type Deadline, type Limits, NodeHttpClient, type Sender, type WireRequest } from './node-http.js';
import type { RateGate } from './rate-gate.js';
import type { RawResponse } from './types.js';
import { proxyFor } from './proxy.js';
import { headersWithout, type SecretForm, secretForms, without } from './redaction.js';

export interface TransportOptions {
  baseUrl: URL;
  env: Readonly<Record<string, string | undefined>>;
  /** A caller's own limits (doctor's shorter ones); FACECTL_HTTP_TIMEOUT, which its hints offer, comes first. */
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxResponseBytes?: number;
  maxRetries?: number;
  /** A longer Retry-After gives up at once. */
  maxRetryAfterMs?: number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  debug?: (line: string) => void;
  /** Strings never shown in a trace (the key). */
  secrets?: () => string[];
  /** Ctrl-C: destroys the client below (a listener per request on it would cost CPU and keep requests alive). */
  signal?: AbortSignal;
  /**
   * facectl's own short-lived process: through a proxy, undici's WebAssembly parser gets V8's baseline compiler
   * only (`faces get`: 514 M instructions against 1,004 M, Node 20). A process-wide flag: not for a library's host.
   */
  fastExit?: boolean;
}

/** The signal of a request no one can abort (the client was given none and the call none). */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** `path`: with its query, relative to the origin, base path included. */
interface Exchange extends Pick<WireRequest, 'method' | 'path' | 'headers'> {
  body?: string | Uint8Array | (() => AsyncIterable<Uint8Array>) | AsyncIterable<Uint8Array>;
  /** Sendable again after a 5xx or a dropped connection (GET, DELETE, idempotency key). */
  repeatable: boolean;
  signal: AbortSignal;
  info: ExchangeInfo;
  /** Read a successful JSON answer as a stream, these strings kept out of memory (json-stream.ts). */
  largeStrings?: LargeStrings;
  gate?: RateGate;
}

export interface ExchangeResult extends Pick<RawResponse, 'status' | 'statusText' | 'headers'> {
  /** The body as UTF-8 text; empty when it was parsed as a stream (`json`). */
  text: string;
  retryAfterSeconds?: number;
  /** Parsed as it arrived: its value, or its first bytes when it is not JSON. */
  json?: { ok: true; value: unknown } | { ok: false; head: Buffer };
}

const RETRY_STATUSES = new Set([500, 502, 503, 504]);
const HEAD_BYTES = 4096;

export class Transport {
  readonly limits: Limits;
  private readonly deadlineMs: number;
  private readonly cap: number;
  private readonly sender: Promise<Sender>;
  private readonly origin: string;
  private ended = false;
  private readonly onAbort: () => void;
  /** The forms of the one key sent (secretForms), kept while it is the same. */
  private formsOf: { secret: string; forms: SecretForm[] } | undefined;

  constructor(private readonly options: TransportOptions) {
    // Refused (exit 2) here, as a bad proxy variable is, before anything is sent.
    const fromEnv = httpTimeoutFromEnv(options.env);
    this.limits = {
      connectMs: fromEnv ?? options.connectTimeoutMs ?? 10_000,
      headersMs: fromEnv ?? options.headersTimeoutMs ?? 30_000,
      bodyMs: fromEnv ?? options.bodyTimeoutMs ?? 60_000,
    };
    this.deadlineMs = this.limits.connectMs + this.limits.headersMs + this.limits.bodyMs;
    this.cap = options.maxResponseBytes ?? 64 * 1024 * 1024;
    this.origin = options.baseUrl.origin;
    this.onAbort = () => {
      this.ended = true;
      const reason = cancelledBy(options.signal as AbortSignal);
      this.sender.then((sender) => sender.destroy(reason)).catch(() => undefined);
    };
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
    const proxy = proxyFor(options.baseUrl, options.env);
    this.sender = proxy
      ? import('./proxy-agent.js').then(({ proxySender }) => proxySender(proxy, this.limits, options.fastExit))
      : Promise.resolve(new NodeHttpClient(options.baseUrl, this.limits));
  }

  async send(exchange: Exchange): Promise<ExchangeResult> {
    const maxRetries = this.options.maxRetries ?? 3;
    const maxRetryAfterMs = this.options.maxRetryAfterMs ?? 30_000;
    const { body, gate } = exchange;
    // A bare stream can be read once: such a request is never repeated.
    const canRepeat =
      body === undefined || typeof body === 'string' || body instanceof Uint8Array || typeof body === 'function';
    // Retries counted against maxRetries; those through a gate are counted by the gate.
    let retries = 0;
    // What an earlier attempt met that may have reached the service (dropped, or 5xx; a 429 was not processed).
    let reached: string | undefined;
    for (let attempt = 0; ; attempt++) {
      // The client's own signal is not handed to the client below (TransportOptions.signal).
      if (exchange.signal.aborted) throw cancelledBy(exchange.signal);
      const paused = gate?.delay() ?? 0;
      if (paused > 0) await this.wait(paused, 'rate limited: waiting with the whole batch', exchange.signal);
      const ticket = gate?.ticket() ?? 0;
      // One deadline over the attempt, the limits' sum: each bounds a silence; a byte a second is none (case 52).
      const deadline: Deadline = { ms: this.deadlineMs, passed: false };
      let result: ExchangeResult;
      try {
        result = await this.attempt(exchange, attempt, deadline);
      } catch (error) {
        if (exchange.signal.aborted) throw stoppedWhileOut(exchange, cancelledBy(exchange.signal));
        if (deadline.passed) {
          throw new NetworkError(
            `${exchange.info.method} ${exchange.info.path}: no complete answer within ${formatLimit(deadline.ms)} (the service answers too slowly)`,
            { code: 'timeout', hint: 'set FACECTL_HTTP_TIMEOUT=SECONDS to wait longer', cause: error },
          );
        }
        // Our own errors (a response over the cap, a temporary file that could not be written) are final.
        if (error instanceof CliError) throw error;
        if (exchange.repeatable && canRepeat && retries < maxRetries && isRetryableNetworkError(error)) {
          reached = `the connection dropped (${errorCode(error)})`;
          await this.wait(backoff(retries++), reached, exchange.signal);
          continue;
        }
        throw networkErrorFrom(error, exchange.info, this.limits, reached);
      }
      if (result.status !== 429) gate?.passed();
      // 429 means the request was not processed, so any method may be sent again; 5xx only repeatable ones.
      const retryable =
        canRepeat && (result.status === 429 || (RETRY_STATUSES.has(result.status) && exchange.repeatable));
      if (!retryable || (retries >= maxRetries && !(gate && result.status === 429))) return result;
      if (result.retryAfterSeconds !== undefined && result.retryAfterSeconds * 1000 > maxRetryAfterMs) return result;
      const delay = result.retryAfterSeconds !== undefined ? result.retryAfterSeconds * 1000 : backoff(retries);
      if (gate && result.status === 429) {
        // The wait is the gate's, taken before the next attempt (by every request through it).
        if (!gate.pause(ticket, delay, attempt - retries, maxRetries)) return result;
        continue;
      }
      retries++;
      if (result.status !== 429) reached = `the service answered ${result.status}`;
      await this.wait(delay, `status ${result.status}`, exchange.signal);
    }
  }

  async close(): Promise<void> {
    this.options.signal?.removeEventListener('abort', this.onAbort);
    if (this.ended) return;
    this.ended = true;
    await (await this.sender).close();
  }

  private async wait(ms: number, why: string, signal: AbortSignal): Promise<void> {
    this.trace(`* ${why}; retrying in ${Math.round(ms)} ms`);
    await this.options.sleep(ms, signal);
    if (signal.aborted) throw cancelledBy(signal);
  }

  private async attempt(exchange: Exchange, attempt: number, deadline: Deadline): Promise<ExchangeResult> {
    // The trace lines (and their timing) only under --debug: a bulk submit sends thousands of requests,
    // and the global `performance` loads Node's perf_hooks on first use (a millisecond of every command).
    const started = this.options.debug ? performance.now() : 0;
    if (this.options.debug) {
      this.trace(`> ${exchange.method} ${this.origin}${exchange.path}${attempt > 0 ? ` (retry ${attempt})` : ''}`);
      for (const [name, value] of Object.entries(exchange.headers)) {
        const shown = name.toLowerCase() === 'authorization' ? value.replace(/^(\S+)\s.*$/, '$1 [redacted]') : value;
        this.trace(`> ${name}: ${shown}`);
      }
    }
    const body = typeof exchange.body === 'function' ? exchange.body() : exchange.body;
    const sender = await this.sender;
    const response = await sender.send({
      origin: this.origin,
      path: exchange.path,
      method: exchange.method,
      headers: exchange.headers,
      ...(body === undefined ? {} : { body }),
      deadline,
      ...(exchange.signal === this.options.signal || exchange.signal === NEVER_ABORTED
        ? {}
        : { signal: exchange.signal }),
    });
    if (this.options.debug) {
      this.trace(`< ${response.statusCode} (${Math.round(performance.now() - started)} ms)`);
      for (const [name, value] of Object.entries(response.headers)) this.trace(`< ${name}: ${String(value)}`);
    }
    const retryAfterSeconds = parseRetryAfter(response.headers['retry-after']);
    const secrets = this.secretForms();
    const common = {
      status: response.statusCode,
      ...(response.statusText ? { statusText: response.statusText } : {}),
      headers: secrets.length === 0 ? response.headers : headersWithout(secrets, response.headers),
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    };
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    if (exchange.largeStrings && ok && saysJson(response.headers)) {
      const json = await this.readJson(response.body, exchange.info, exchange.largeStrings);
      if (json !== undefined) return { ...common, text: '', json };
    }
    return { ...common, text: without(secrets, await this.readCapped(response.body, response.headers, exchange.info)) };
  }

  /** The forms of the key sent that an answer may quote back (redaction.ts), made once a key: a batch reads thousands. */
  private secretForms(): SecretForm[] {
    const secrets = this.options.secrets?.() ?? [];
    const kept = this.formsOf;
    if (kept !== undefined && secrets.length === 1 && secrets[0] === kept.secret) return kept.forms;
    const forms = secretForms(secrets);
    if (secrets.length === 1) this.formsOf = { secret: secrets[0] as string, forms };
    return forms;
  }

  /**
   * Parses a JSON answer as it arrives: the cap bounds what is held, the whole may be 8x it (an echo of an
   * escaped text is longer). Undefined when no temporary directory could be made (then read whole).
   */
  private async readJson(
    body: AsyncIterable<Buffer> & { destroy(error?: Error): void },
    info: ExchangeInfo,
    large: LargeStrings,
  ): Promise<ExchangeResult['json']> {
    const reading = await large.begin().catch((error: unknown) => {
      this.trace(`* no temporary directory for the answer (${(error as Error).message}); reading it whole`);
    });
    if (reading === undefined) return undefined;
    const { JsonStreamError, JsonStreamParser } = await import('./json-stream.js');
    const parser = new JsonStreamParser(reading.options);
    const head: Buffer[] = [];
    let headBytes = 0;
    let size = 0;
    try {
      for await (const chunk of body) {
        size += chunk.length;
        if (headBytes < HEAD_BYTES) {
          const part = Buffer.from(chunk.subarray(0, HEAD_BYTES - headBytes));
          head.push(part);
          headBytes += part.length;
        }
        if (size > this.cap * 8) throw this.tooLarge(body, info, this.cap * 8);
        parser.write(chunk);
        if (size - parser.largeBytes > this.cap) throw this.tooLarge(body, info, this.cap);
        await keep(() => reading.flush(), body);
      }
      const value = parser.end();
      await keep(() => reading.commit(), body);
      return { ok: true, value };
    } catch (error) {
      const notJson = error instanceof JsonStreamError;
      if (notJson) body.destroy();
      await reading.abort();
      if (!notJson) throw error;
      return { ok: false, head: Buffer.concat(head, headBytes) };
    }
  }

  private tooLarge(body: { destroy(error?: Error): void }, info: ExchangeInfo, cap: number): ResponseError {
    body.destroy();
    return new ResponseError(
      `the response of ${info.method} ${info.path} is larger than ${Math.round(cap / 1024 / 1024)} MiB; aborted`,
      { code: 'response_too_large' },
    );
  }

  /** Reads the body as text, refused past the cap: by its Content-Length first, else as it comes. */
  private readCapped(body: Readable, headers: ExchangeResult['headers'], info: ExchangeInfo): Promise<string> {
    const declared = headers['content-length'];
    if (typeof declared === 'string' && /^\d+$/.test(declared) && Number(declared) > this.cap) {
      return Promise.reject(this.tooLarge(body, info, this.cap));
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      body.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > this.cap) reject(this.tooLarge(body, info, this.cap));
        else chunks.push(chunk);
      });
      body.on('error', reject);
      body.on('end', () => resolve(Buffer.concat(chunks, size).toString('utf8')));
    });
  }

  private trace(line: string): void {
    if (!this.options.debug) return;
    line = without(this.secretForms(), line);
    for (const secret of this.options.secrets?.() ?? []) if (secret) line = line.replaceAll(secret, '[redacted]');
    this.options.debug(line);
  }
}

/** Whether an answer says it is JSON (its Content-Type), as the service's answers, its errors too, all do. */
export const saysJson = (headers: ExchangeResult['headers']): boolean =>
  /\bjson\b/i.test(String(headers['content-type'] ?? ''));

/** A failure writing the answer's temporary files is local, not the network's. */
async function keep(write: () => Promise<void>, body: { destroy(error?: Error): void }): Promise<void> {
  try {
    await write();
  } catch (error) {
    body.destroy();
    throw new CliError(`could not write the answer to a temporary file: ${(error as Error).message}`, ExitCode.error, {
      code: 'temp_file_failed',
      hint: 'free some space in the temporary directory, or point TMPDIR at another one',
    });
  }
}

function backoff(attempt: number): number {
  const base = Math.min(4000, 250 * 2 ** attempt);
  return base * (0.5 + Math.random() / 2);
}

/** Retry-After as whole seconds: either delta-seconds or an HTTP date. */
function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** One day: the deadline (three times it) must fit Node's 32-bit timers, which past ~715,828 s fire at once. */
const MAX_HTTP_TIMEOUT_SECONDS = 86_400;

function httpTimeoutFromEnv(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env.FACECTL_HTTP_TIMEOUT;
  if (raw === undefined || raw === '') return undefined;
  const seconds = /^\d+(\.\d{1,3})?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(seconds > 0 && seconds <= MAX_HTTP_TIMEOUT_SECONDS)) {
    throw new UsageError(
      `FACECTL_HTTP_TIMEOUT must be a number of seconds from 0.001 to ${MAX_HTTP_TIMEOUT_SECONDS} (got ${JSON.stringify(raw)})`,
      { hint: 'e.g. FACECTL_HTTP_TIMEOUT=120, or unset it for the defaults (10, 30 and 60 s)' },
    );
  }
  return Math.round(seconds * 1000);
}

/** A stop (Ctrl-C, SIGTERM) while a request that changes something was out: the service may have applied it. */
function stoppedWhileOut({ info }: Exchange, reason: CancelError): CancelError {
  if (info.method === 'GET') return reason;
  return new CancelError(reason.message, {
    exitCode: reason.exitCode,
    hint: `${info.method} ${info.path} was on its way: the service may have applied it`,
    cause: reason,
  });
}

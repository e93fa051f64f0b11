import type { Agent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

/**
 * Node's own HTTP client with keep-alive, for every request not through a proxy (docs/decisions.md), with
 * undici's limits and codes: connect (DNS included), headers (a silence from when the request can be
 * written: an upload still going is none), body (a silence).
 */

/** A request as the transport hands it to this client or the proxy's (proxy-agent.ts). */
export interface WireRequest {
  origin: string;
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | AsyncIterable<Uint8Array>;
  /** A signal of the call's own (the client's is handled for every request at once, by destroy()). */
  signal?: AbortSignal;
  /** The attempt's overall deadline (transport.ts): ends the request and its answer, then says so. */
  deadline: Deadline;
}

/**
 * A timer, not an AbortSignal: a signal per request of a batch (its controller, a listener added and
 * removed) cost more than the rest of the request's bookkeeping. `passed` once it ended the request.
 */
export type Deadline = { ms: number; passed: boolean };

export interface WireResponse {
  statusCode: number;
  statusText?: string;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

export interface Sender {
  send(request: WireRequest): Promise<WireResponse>;
  /** Ends every request in flight with `reason` (Ctrl-C). */
  destroy(reason: Error): void;
  close(): void | Promise<void>;
}

export type Limits = { connectMs: number; headersMs: number; bodyMs: number };

/**
 * A request in flight. Its listeners are shared by every request (`this` is the emitter; the answer's
 * `req` leads back here): a batch sends thousands, and five closures each showed in the profile.
 */
type InFlight = {
  client: NodeHttpClient;
  req: ClientRequest;
  res?: IncomingMessage;
  resolve(response: WireResponse): void;
  reject(error: Error): void;
  signal?: AbortSignal;
  onAbort?: () => void;
  deadline: Deadline;
  started: number;
  /**
   * The current silence: since when the socket's count (bytesWritten while the headers are awaited,
   * bytesRead once answered) is `seen`. Unset while connecting.
   */
  since?: number;
  seen: number;
};

// Set on each request as it is made, before it can emit anything.
const IN_FLIGHT = Symbol('facectl.inFlight');
type Tagged = ClientRequest & { [IN_FLIGHT]: InFlight };

function onRequestError(this: Tagged, error: Error): void {
  const entry = this[IN_FLIGHT];
  entry.client.forget(entry);
  entry.reject(error);
}

function onResponse(this: Tagged, res: IncomingMessage): void {
  const entry = this[IN_FLIGHT];
  entry.res = res;
  entry.seen = (res.socket as Socket).bytesRead;
  entry.since = Date.now();
  // Before the transport reads it (a tick later), a failure must not be an unhandled 'error'.
  res.on('error', ignore);
  res.once('close', onAnswerClosed);
  entry.resolve({
    statusCode: res.statusCode ?? 0,
    ...(res.statusMessage ? { statusText: res.statusMessage } : {}),
    headers: res.headers,
    body: res,
  });
}

function onAnswerClosed(this: IncomingMessage & { req: Tagged }): void {
  // An answer's `req` is the request it answers (Node sets it; its types do not list it).
  const entry = this.req[IN_FLIGHT];
  entry.client.forget(entry);
}

const ignore = () => undefined;

export class NodeHttpClient implements Sender {
  private readonly module: Pick<typeof import('node:http'), 'Agent' | 'request'>;
  private readonly agent: Agent;
  private readonly protocol: string;
  private readonly hostname: string;
  private readonly port: number | undefined;
  /** Plain http: an empty server name (else the agent works one out from each request's Host header). */
  private readonly servername: string | undefined;
  /** Requests sent and not yet answered in full: watched by the sweep, ended together by destroy(). */
  private readonly live = new Set<InFlight>();
  /**
   * One timer for the limits and deadlines of the live requests (docs/decisions.md). Each phase is timed
   * from when the sweep first saw it, so a limit ends at most one tick late and never early.
   */
  private sweeper: NodeJS.Timeout | undefined;
  private readonly tick: number;

  constructor(
    private readonly origin: URL,
    private readonly limits: Limits,
  ) {
    // Not an import: node:https (and TLS) load only for an https base URL.
    this.module = process.getBuiltinModule(origin.protocol === 'https:' ? 'node:https' : 'node:http');
    this.agent = new this.module.Agent({ keepAlive: true });
    // As Node reads a URL, made once (request() converts a URL at every call: 15 µs, profiled): an IPv6
    // literal unbracketed, no port when it has none (no credentials: types.ts).
    this.protocol = origin.protocol;
    this.hostname = origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname;
    this.port = origin.port === '' ? undefined : Number(origin.port);
    this.servername = origin.protocol === 'http:' ? '' : undefined;
    // An eighth of the shortest limit, within 1-250 ms: a 10 s limit ends within 10.25 s.
    this.tick = Math.min(250, Math.max(1, Math.min(limits.connectMs, limits.headersMs, limits.bodyMs) / 8));
  }

  send(request: WireRequest): Promise<WireResponse> {
    const { signal } = request;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const req = this.module.request({
        protocol: this.protocol,
        hostname: this.hostname,
        port: this.port,
        servername: this.servername,
        agent: this.agent,
        method: request.method,
        path: request.path,
        headers: request.headers,
      } as RequestOptions);
      const entry: InFlight = {
        client: this,
        req,
        resolve,
        reject,
        deadline: request.deadline,
        started: Date.now(),
        seen: 0,
      };
      (req as Tagged)[IN_FLIGHT] = entry;
      this.live.add(entry);
      this.sweeper ??= setInterval(() => this.sweep(), this.tick).unref();
      if (signal) {
        entry.signal = signal;
        entry.onAbort = () => this.fail(entry, signal.reason as Error);
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      req.on('error', onRequestError);
      req.on('response', onResponse);

      const { body } = request;
      if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) {
        // Written whole, so Node sends its Content-Length.
        req.end(body);
      } else {
        // A stream (a large document read as it is sent): with backpressure; its failure ends the request.
        const { Readable: readable, pipeline } = process.getBuiltinModule('node:stream');
        pipeline(readable.from(body, { objectMode: false }), req, (error) => {
          // Once answered (a refusal before the whole body was sent), the answer is what counts.
          if (error && !entry.res) this.fail(entry, error);
        });
      }
    });
  }

  destroy(reason: Error): void {
    for (const entry of this.live) this.fail(entry, reason);
    this.agent.destroy();
  }

  close(): void {
    this.agent.destroy();
  }

  /** The request is done with (answered in full, or failed). */
  forget(entry: InFlight): void {
    this.live.delete(entry);
    if (entry.onAbort) entry.signal?.removeEventListener('abort', entry.onAbort);
  }

  private fail(entry: InFlight, error: Error): void {
    this.forget(entry);
    entry.req.destroy(error);
    entry.res?.destroy(error);
  }

  /** Ends each request past its deadline or a limit, with undici's error for that limit. */
  private sweep(): void {
    if (this.live.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
      return;
    }
    const now = Date.now();
    const { connectMs, headersMs, bodyMs } = this.limits;
    for (const entry of this.live) {
      if (now - entry.started > entry.deadline.ms) {
        entry.deadline.passed = true;
        this.fail(entry, new Error('deadline'));
        continue;
      }
      const socket = (entry.res?.socket ?? entry.req.socket) as Socket | null;
      if (entry.since === undefined) {
        if (socket && !socket.connecting) {
          entry.since = now;
          entry.seen = socket.bytesWritten;
        } else if (now - entry.started > connectMs)
          this.fail(entry, limitError('UND_ERR_CONNECT_TIMEOUT', 'Connect Timeout Error'));
        continue;
      }
      // Any byte moved ends the silence: a slow, steady upload is none, as undici refreshes its headers
      // timer at each write.
      const count = socket ? (entry.res ? socket.bytesRead : socket.bytesWritten) : entry.seen;
      if (count !== entry.seen) {
        entry.seen = count;
        entry.since = now;
      } else if (entry.res && now - entry.since > bodyMs)
        this.fail(entry, limitError('UND_ERR_BODY_TIMEOUT', 'Body Timeout Error'));
      else if (!entry.res && now - entry.since > headersMs)
        this.fail(entry, limitError('UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error'));
    }
  }
}

const limitError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

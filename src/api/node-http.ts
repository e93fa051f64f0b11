import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

/**
 * Node's own HTTP client with keep-alive, for every request not through a proxy (docs/decisions.md).
 * undici's limits, measured alike: connect (DNS included), headers (from when the request can be
 * written), body (a silence); one that passes fails with undici's code, so error-mapping.ts reads both.
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

/** When `deadline` passes, `end` is called with the error the request fails with. */
export function startDeadline(deadline: Deadline, end: (error: Error) => void): NodeJS.Timeout {
  // unref: an open socket keeps the process alive while it matters; the timer alone must not.
  return setTimeout(() => {
    deadline.passed = true;
    end(new Error('deadline'));
  }, deadline.ms).unref();
}

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

export class NodeHttpClient implements Sender {
  private readonly module: Pick<typeof import('node:http'), 'Agent' | 'request'>;
  private readonly agent: Agent;
  /** The origin as request options, made once: request() converts a URL at every call (15 µs, profiled). */
  private readonly target: { protocol: string; hostname: string; port?: number; servername?: string };
  /** Requests sent and not yet answered in full, ended together by destroy(). */
  private readonly live = new Set<ClientRequest | IncomingMessage>();

  constructor(
    private readonly origin: URL,
    private readonly limits: Limits,
  ) {
    // Not an import: node:https (and TLS) load only for an https base URL.
    this.module = process.getBuiltinModule(origin.protocol === 'https:' ? 'node:https' : 'node:http');
    this.agent = new this.module.Agent({ keepAlive: true });
    // As Node reads a URL: an IPv6 literal unbracketed, no port when it has none (no credentials: types.ts).
    const hostname = origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname;
    this.target = { protocol: origin.protocol, hostname, ...(origin.port === '' ? {} : { port: Number(origin.port) }) };
    // Plain http sends no server name, yet the agent works one out from each request's Host header unless
    // given (an empty one is kept); https needs it, for SNI.
    if (origin.protocol === 'http:') this.target.servername = '';
  }

  send(request: WireRequest): Promise<WireResponse> {
    const { signal } = request;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const req = this.module.request({
        ...this.target,
        agent: this.agent,
        method: request.method,
        path: request.path,
        headers: request.headers,
      });
      this.live.add(req);
      let timer: NodeJS.Timeout | undefined;
      let answer: IncomingMessage | undefined;
      const stopTimer = () => clearTimeout(timer);
      const fail = (error: Error) => {
        stopTimer();
        req.destroy(error);
        answer?.destroy(error);
      };
      const onAbort = () => fail(signal?.reason as Error);
      signal?.addEventListener('abort', onAbort, { once: true });
      const overall = startDeadline(request.deadline, fail);
      const done = () => {
        stopTimer();
        clearTimeout(overall);
        signal?.removeEventListener('abort', onAbort);
        this.live.delete(req);
        if (answer) this.live.delete(answer);
      };
      const limit = (ms: number, code: string, message: string) => {
        stopTimer();
        timer = setTimeout(() => fail(limitError(code, message)), ms);
      };

      req.on('socket', (socket: Socket) => {
        const headers = () => limit(this.limits.headersMs, 'UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error');
        if (!socket.connecting) return headers();
        limit(this.limits.connectMs, 'UND_ERR_CONNECT_TIMEOUT', 'Connect Timeout Error');
        socket.once('connect', headers);
      });
      req.on('error', (error) => {
        done();
        reject(error);
      });
      req.on('response', (res: IncomingMessage) => {
        stopTimer();
        answer = res;
        this.live.add(res);
        // A silence in the body: the socket's own idle timer, stopped when the answer ends.
        const socket = res.socket as Socket;
        const onSilence = () => fail(limitError('UND_ERR_BODY_TIMEOUT', 'Body Timeout Error'));
        socket.setTimeout(this.limits.bodyMs);
        socket.once('timeout', onSilence);
        // Before the transport reads it (a tick later), a failure must not be an unhandled 'error'.
        res.on('error', () => undefined);
        // The socket's timeout stays: an agent keeping the socket sets its own.
        res.once('close', () => {
          socket.removeListener('timeout', onSilence);
          done();
        });
        resolve({
          statusCode: res.statusCode ?? 0,
          ...(res.statusMessage ? { statusText: res.statusMessage } : {}),
          headers: res.headers,
          body: res,
        });
      });

      const { body } = request;
      if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) {
        // Written whole, so Node sends its Content-Length.
        req.end(body);
      } else {
        // A stream (a large document read as it is sent): with backpressure; its failure ends the request.
        const { Readable: readable, pipeline } = process.getBuiltinModule('node:stream');
        pipeline(readable.from(body, { objectMode: false }), req, (error) => {
          // Once answered (a refusal before the whole body was sent), the answer is what counts.
          if (error && !answer) fail(error);
        });
      }
    });
  }

  destroy(reason: Error): void {
    for (const message of this.live) message.destroy(reason);
    this.live.clear();
    this.agent.destroy();
  }

  close(): void {
    this.agent.destroy();
  }
}

const limitError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

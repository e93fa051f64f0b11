import { Agent, type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { type ServeProcess, startServeProcess } from './serve-process.js';

/** mulberry32, the fuzz runs' seeded PRNG, so a failing soak can be replayed with the same choices. */
export { mulberry32 as prng } from '../fuzz/generators.js';

/**
 * Pieces of the service soak (test/service/soak.test.ts): a seeded PRNG, a plain node:http client that
 * tells a connection lost (the request may or may not have been applied) from an answer, and a
 * `facectl serve --data FILE` process that the soak kills with SIGKILL and starts again on the same file.
 */

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as received, byte for byte (UTF-8). */
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the soak walks response bodies freely
  body: any;
}

/** The connection failed or died before a whole answer arrived: the request is unacknowledged. */
export class ConnectionLost extends Error {}

export interface HttpCall {
  method: string;
  path: string;
  key: string;
  /** Sent as is (JSON); the soak keeps the exact bytes to repeat a request with the same Idempotency-Key. */
  bodyText?: string;
  headers?: Record<string, string>;
}

/** One request over `agent`; resolves with any answer, rejects with ConnectionLost when none arrived. */
export function httpCall(baseUrl: string, agent: Agent, call: HttpCall, timeoutMs = 20_000): Promise<HttpAnswer> {
  const url = new URL(call.path, baseUrl);
  const headers: Record<string, string | number> = { Authorization: `Bearer ${call.key}`, ...call.headers };
  const payload = call.bodyText === undefined ? undefined : Buffer.from(call.bodyText, 'utf8');
  if (payload) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = payload.length;
  }
  return new Promise((resolve, reject) => {
    const lost = (error: Error) => reject(new ConnectionLost(`${call.method} ${call.path}: ${error.message}`));
    const req = httpRequest(url, { method: call.method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', lost);
      res.on('aborted', () => lost(new Error('response aborted')));
      res.on('end', () => {
        if (!res.complete) return lost(new Error('response cut short'));
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = text.length > 0 ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', lost);
    req.end(payload);
  });
}

export interface ServiceTarget {
  baseUrl: string;
  agent: Agent;
  /** Which start of the service this is: 1 for the first, +1 for each restart. */
  generation: number;
  process: ServeProcess;
}

/**
 * `facectl serve --data FILE` (the built bin, via startServeProcess) that can be killed with SIGKILL
 * and started again on the same file; each start listens on a new port. Clients ask current() for the
 * running one, which waits while a restart is under way.
 */
export class RestartingService {
  /** SIGKILLs of a running service. */
  kills = 0;
  /** SIGKILLs of a service still starting (crashWhileStarting). */
  startKills = 0;
  /** Starts after the first. */
  restarts = 0;
  private target: ServiceTarget | null = null;
  private waiting: (() => void)[] = [];
  private generation = 0;
  private readonly dataFile: string;
  private lastStartMs = 0;

  constructor(dataFile: string) {
    this.dataFile = dataFile;
  }

  /** Starts the service on the data file and waits until it is ready. */
  async start(): Promise<ServiceTarget> {
    const spawned = Date.now();
    const process = await startServeProcess(['--data', this.dataFile]);
    // How long a start takes, from the spawn to ready: opening the database, the bootstrap keys.
    this.lastStartMs = Date.now() - spawned;
    if (this.generation > 0) this.restarts++;
    this.generation++;
    const target: ServiceTarget = {
      baseUrl: process.baseUrl,
      agent: new Agent({ keepAlive: true, maxSockets: 16 }),
      generation: this.generation,
      process,
    };
    this.target = target;
    for (const wake of this.waiting.splice(0)) wake();
    return target;
  }

  /** The running service; waits while it is down. */
  async current(): Promise<ServiceTarget> {
    while (this.target === null) await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.target;
  }

  /** kill -9 of the running service (requests in flight die with it), then a start on the same file. */
  async crashAndRestart(): Promise<ServiceTarget> {
    await this.crash();
    return this.start();
  }

  /**
   * Starts the service on the data file and kills it with SIGKILL before it is ready, at `moment` (a
   * fraction) of the time its last start took: while Node starts, while the database is opened (its
   * WAL recovered) or while the bootstrap keys are written. It may come too late and hit a ready
   * service, which is a crash all the same. The service stays down. A start that fails by itself (say,
   * on a state file it cannot read) throws.
   */
  async crashWhileStarting(moment: number): Promise<void> {
    if (this.target) throw new Error('crashWhileStarting: the service is running');
    let pid = 0;
    const starting = startServeProcess(['--data', this.dataFile], undefined, (spawned) => {
      pid = spawned;
    }).catch((error: Error) => error);
    await sleep(Math.round(moment * this.lastStartMs));
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // it has exited already; `starting` says why
    }
    const started = await starting;
    if (started instanceof Error) {
      // startServeProcess reports the exit code: null when a signal ended the process.
      if (!started.message.startsWith('serve exited with null')) throw started;
    } else {
      await started.kill();
    }
    this.startKills++;
  }

  /** kill -9, leaving the service down. */
  async crash(): Promise<void> {
    if (await this.halt((process) => process.kill())) this.kills++;
  }

  /** SIGTERM: the service finishes what is in flight and closes the database. */
  async stop(): Promise<void> {
    await this.halt((process) => process.stop());
  }

  /** Ends the running process (if any) the given way and drops its connections; false when none ran. */
  private async halt(end: (process: ServeProcess) => Promise<unknown>): Promise<boolean> {
    const target = this.target;
    if (!target) return false;
    this.target = null;
    await end(target.process);
    target.agent.destroy();
    return true;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

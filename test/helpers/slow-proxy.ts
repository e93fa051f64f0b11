import type { FaultServer } from './fault-server.js';

/**
 * Makes a fault server a slow proxy in front of a real service: each request is forwarded at once (so
 * the service acts on it) and its answer is held back for `delayMs` before it is passed on. A client
 * interrupted in that window has had its request applied without seeing the answer: the case that
 * idempotency keys and --resume exist for.
 *
 * `holdAfter(n)` closes a gate behind the n-th answer passed on: every later answer is held (its
 * request applied by the service) until `release()` or until its client goes away. A test that stops a
 * client "after n answers" then does not depend on how fast the machine is: however slow the test's
 * own process, the client cannot get further than n.
 */
export interface SlowProxy {
  /** Answers passed on to the client. */
  answered(): number;
  /** Answers the service gave that are not passed on yet: requests applied, their client not told. */
  held(): number;
  /** Requests on their way to the service: a test that counts the service's requests waits for 0 first. */
  forwarding(): number;
  holdAfter(n: number): void;
  release(): void;
}

export function slowProxy(server: FaultServer, target: string, delayMs: number): SlowProxy {
  let answered = 0;
  let held = 0;
  let forwarding = 0;
  let limit = Number.POSITIVE_INFINITY;
  let opened: (() => void)[] = [];
  server.handle(async (req, res) => {
    const headers: Record<string, string> = {};
    for (const name of ['authorization', 'content-type', 'idempotency-key', 'accept']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    forwarding++;
    let upstream: Response;
    let text: string;
    try {
      upstream = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: req.body }),
      });
      text = await upstream.text();
    } finally {
      forwarding--;
    }
    held++;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    while (answered >= limit && !res.destroyed) {
      await new Promise<void>((resolve) => {
        opened.push(resolve);
        res.once('close', resolve);
      });
    }
    held--;
    if (res.destroyed) return;
    res.writeHead(upstream.status, {
      'content-type': upstream.headers.get('content-type') ?? 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
    answered++;
  });
  const wake = () => {
    const waiting = opened;
    opened = [];
    for (const resolve of waiting) resolve();
  };
  return {
    answered: () => answered,
    held: () => held,
    forwarding: () => forwarding,
    holdAfter: (n) => {
      limit = n;
      wake();
    },
    release: () => {
      limit = Number.POSITIVE_INFINITY;
      wake();
    },
  };
}

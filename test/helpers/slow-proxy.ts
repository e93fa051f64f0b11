import type { FaultServer } from './fault-server.js';

/**
 * Makes a fault server a slow proxy in front of a real service: each request is forwarded at once (so
 * the service acts on it) and its answer is held back for `delayMs` before it is passed on. A client
 * interrupted in that window has had its request applied without seeing the answer: the case that
 * idempotency keys and --resume exist for.
 */
export function slowProxy(
  server: FaultServer,
  target: string,
  delayMs: number,
): { answered(): number; held(): number } {
  let answered = 0;
  /** Answers the service gave that are not passed on yet: requests applied, their client not told. */
  let held = 0;
  server.handle(async (req, res) => {
    const headers: Record<string, string> = {};
    for (const name of ['authorization', 'content-type', 'idempotency-key', 'accept']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers,
      ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: req.body }),
    });
    const text = await upstream.text();
    held++;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    held--;
    if (res.destroyed) return;
    res.writeHead(upstream.status, {
      'content-type': upstream.headers.get('content-type') ?? 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
    answered++;
  });
  return { answered: () => answered, held: () => held };
}

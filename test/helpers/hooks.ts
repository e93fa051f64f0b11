import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { type FaultHandler, type FaultServer, startFaultServer } from './fault-server.js';
import { ensureBuilt, type ServeProcess, startServeProcess, startServeWithFace } from './serve-process.js';

/**
 * What a test file runs against, set up by its own hooks: call one of these at the top of the file
 * instead of writing `let x; beforeAll(start x); afterAll(stop x)`. The object returned stands for
 * the running one (a property read inside a test reaches the current instance), so tests use it as
 * they would the instance itself; outside a test it throws. The in-process service: useService in
 * service-suite.ts.
 */

function standIn<T extends object>(what: string, current: () => T | undefined): T {
  const target = () => {
    const running = current();
    if (!running) throw new Error(`${what} is not running: use it inside a test or a hook`);
    return running;
  };
  return new Proxy({} as T, {
    get(_, property) {
      if (property === 'then') return undefined; // not a promise, whatever awaits it
      const running = target();
      const value: unknown = Reflect.get(running, property, running);
      return typeof value === 'function' ? value.bind(running) : value;
    },
    set(_, property, value) {
      return Reflect.set(target(), property, value);
    },
  });
}

interface Lifetime {
  /** A fresh one for each test (default: one for the whole file). */
  eachTest?: boolean;
}

/** `start` before the file's tests (or each test), `stop` after them. */
export function useRunning<T extends object>(
  what: string,
  start: () => Promise<T>,
  stop: (running: T) => Promise<unknown> | unknown,
  { eachTest = false }: Lifetime = {},
): T {
  let current: T | undefined;
  (eachTest ? beforeEach : beforeAll)(async () => {
    current = await start();
  }, 120_000);
  (eachTest ? afterEach : afterAll)(async () => {
    const running = current;
    current = undefined;
    if (running) await stop(running);
  });
  return standIn(what, () => current);
}

/**
 * `facectl serve` as a process (the built bin; dist/ built first if it is stale), with the face `face`
 * created for the Pro user when given, and `args` added to its command line.
 */
export function useServe(options: { face?: string; args?: string[] } & Lifetime = {}): ServeProcess {
  const { face, args = [] } = options;
  return useRunning(
    'facectl serve',
    async () => {
      if (face !== undefined) return startServeWithFace(face, args);
      ensureBuilt();
      return startServeProcess(args);
    },
    (serve) => serve.stop(),
    options,
  );
}

/** A fault server (see fault-server.ts) answering with `handler`. */
export function useFaultServer(handler?: FaultHandler, lifetime: Lifetime = {}): FaultServer {
  return useRunning(
    'the fault server',
    () => startFaultServer(handler),
    (server) => server.close(),
    lifetime,
  );
}

import { call } from './service.js';

/**
 * Load on a running service: `workers` loops that each create documents on the face `alias` one after
 * another, as fast as the answers come, until `stop()` (or until the connection dies with the
 * process). `acknowledged` holds the id of every document the service answered 201 for.
 */
export interface Load {
  acknowledged: string[];
  /** Stops the loops and resolves once each has ended. */
  stop(): Promise<void>;
}

export function createDocumentsUnderLoad(
  service: { baseUrl: string },
  key: string,
  alias: string,
  workers: number,
): Load {
  const acknowledged: string[] = [];
  let stopped = false;
  const worker = async (w: number) => {
    for (let i = 0; !stopped; i++) {
      try {
        const res = await call(service, 'createDocument', {
          key,
          body: { alias, content: `worker ${w} document ${i}`, label: `w${w}-${i}` },
        });
        if (res.status === 201) acknowledged.push(res.body.document_id);
      } catch {
        return; // the connection died with the process
      }
    }
  };
  const running = Array.from({ length: workers }, (_, w) => worker(w));
  return {
    acknowledged,
    stop: async () => {
      stopped = true;
      await Promise.all(running);
    },
  };
}

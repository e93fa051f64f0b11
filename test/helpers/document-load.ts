import { call } from './service.js';

/** Load on a running service: document creations from several loops at once, for kill -9 tests. */

export interface DocumentLoad {
  /** Ids of the documents answered 201, in the order the answers came. */
  acknowledged: string[];
  /** Ends the loops after their current request; resolves when all have ended. */
  stop(): Promise<void>;
}

/**
 * Starts `workers` loops that each create documents of the face `alias` one after another, until
 * stop() or until their connection dies with the process.
 */
export function documentLoad(service: { baseUrl: string }, key: string, alias: string, workers = 8): DocumentLoad {
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
  const running = Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  return {
    acknowledged,
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

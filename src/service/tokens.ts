import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { HttpError } from './errors.js';
import { type BpeCore, chunkLongPieces, MAX_PIECE, makeFastCounter, SELF_TEST } from './token-count.js';
import { tokenizerPath } from './tokenizer-path.js';

/**
 * Token counts with gpt-tokenizer's o200k_base: a small text inline (a worker round trip costs more than counting
 * 2 KB), a large one or one with pieces over MAX_PIECE in a worker thread, so the server is not stopped meanwhile.
 * countStringTokens, not countTokens: that one throws (a 500) on text that spells a special token (`<|endoftext|>`).
 */
type CountTokens = (text: string, spent?: { long: number }) => number;
let loading: Promise<CountTokens> | undefined;
/** Once loaded: a small text's count needs no await. */
let loaded: CountTokens | undefined;

/** Texts at least this long (UTF-16 units) are counted off the event loop. */
export const WORKER_THRESHOLD = 256 * 1024;

/**
 * Loaded at the first count, not at start: about 0.8 s of CPU (two thirds of a serve's start) that a serve counting
 * nothing never pays; the first requests that count wait for it. One that fails to load fails them (500).
 */
export function loadTokenizer(): Promise<CountTokens> {
  return (loading ??= Promise.resolve().then(() => {
    // Private in the package's typings, public at run time.
    const encoding = (createRequire(import.meta.url)(tokenizerPath()) as { default: unknown }).default as {
      countStringTokens(text: string): number;
      bytePairEncodingCoreProcessor: BpeCore;
    };
    chunkLongPieces(encoding.bytePairEncodingCoreProcessor);
    const library = (text: string) => encoding.countStringTokens(text);
    // The library's own count when the fast one cannot be trusted with this version of the package.
    const fast = makeFastCounter(encoding.bytePairEncodingCoreProcessor);
    if (!fast || !SELF_TEST.every((text) => fast(text) === library(text))) return (loaded = library);
    return (loaded = (text: string, spent?: { long: number }) => {
      try {
        return fast(text, spent);
      } catch {
        return library(text);
      }
    });
  }));
}

/**
 * The tokens of `texts` (a document's content, or a thread's messages: their sum), counted where one text of
 * their total length would be: each message of a thread was small enough for the event loop, and 10,000 of
 * 1,000 `x` held it for about 5 s. `stopping`: aborted when the service begins to stop; a count in a worker then
 * ends at once (503).
 */
export async function countTokens(texts: string | readonly string[], stopping?: AbortSignal): Promise<number> {
  const list = typeof texts === 'string' ? [texts] : texts;
  let length = 0;
  for (const text of list) length += text.length;
  if (length === 0) return 0;
  if (length >= WORKER_THRESHOLD) return countInWorker(list, length, stopping);
  const count = loaded ?? (await loadTokenizer());
  const spent = { long: 0 };
  let total = 0;
  for (const text of list) {
    const inline = count(text, spent);
    if (inline < 0) return countInWorker(list, length, stopping);
    total += inline;
  }
  return total;
}

// Evaluated from source: no separate file to locate in the bundle.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const encoding = require(workerData.tokenizer).default;
(${chunkLongPieces.toString()})(encoding.bytePairEncodingCoreProcessor, ${MAX_PIECE});
parentPort.on('message', ({ id, texts }) => {
  try {
    let count = 0;
    for (const text of texts) count += encoding.countStringTokens(text);
    parentPort.postMessage({ id, count });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) });
  }
});
`;

type PoolWorker = {
  worker: Worker;
  pending: Map<number, { resolve(count: number): void; reject(error: Error): void }>;
};

const pool: PoolWorker[] = [];
let nextId = 0;

const POOL_SIZE = Math.max(1, Math.min(2, availableParallelism() - 1));

function spawnWorker(): PoolWorker {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { tokenizer: tokenizerPath() } });
  const entry: PoolWorker = { worker, pending: new Map() };
  // Idle workers must not keep the process alive; a count in flight holds a ref (see countInWorker).
  worker.unref();
  worker.on('message', (msg: { id: number; count?: number; error?: string }) => {
    const job = entry.pending.get(msg.id);
    if (!job) return;
    entry.pending.delete(msg.id);
    if (entry.pending.size === 0) worker.unref();
    if (msg.error !== undefined) job.reject(new Error(`token counting failed: ${msg.error}`));
    else job.resolve(msg.count as number);
  });
  worker.on('error', (error) => retire(entry, error));
  worker.on('exit', (code) => retire(entry, new Error(`token counting worker exited (${code})`)));
  pool.push(entry);
  return entry;
}

const stopped = () => new HttpError(503, 'service_stopping', 'the service is stopping; try again');

/**
 * Texts at least this long leave their worker retired once idle: an idle worker never collects its heap
 * (docs/decisions.md). A new worker costs about 150 ms, against seconds of counting.
 */
const RETIRE_AFTER = 8 * 1024 * 1024;

/** Ends a worker (it cannot be interrupted otherwise); the counts it still had fail with `error`. */
function retire(entry: PoolWorker, error?: Error): void {
  const index = pool.indexOf(entry);
  if (index >= 0) pool.splice(index, 1);
  void entry.worker.terminate();
  for (const job of entry.pending.values()) job.reject(error as Error);
  entry.pending.clear();
}

let workerCounts = 0;

function countInWorker(texts: readonly string[], length: number, stopping: AbortSignal | undefined): Promise<number> {
  workerCounts++;
  if (stopping?.aborted) return Promise.reject(stopped());
  const target =
    pool.find((w) => w.pending.size === 0) ??
    (pool.length < POOL_SIZE ? spawnWorker() : pool.reduce((a, b) => (b.pending.size < a.pending.size ? b : a)));
  const id = nextId++;
  return new Promise<number>((resolve, reject) => {
    // Stopping ends the count, and any other its worker had queued; the next count starts a new worker.
    const onStop = () => retire(target, stopped());
    stopping?.addEventListener('abort', onStop, { once: true });
    const done = () => stopping?.removeEventListener('abort', onStop);
    const large = length >= RETIRE_AFTER;
    target.pending.set(id, {
      resolve: (count) => {
        done();
        if (large && target.pending.size === 0) retire(target); // none left to fail
        resolve(count);
      },
      reject: (error) => {
        done();
        reject(error);
      },
    });
    target.worker.ref();
    target.worker.postMessage({ id, texts });
  });
}

/** For tests. */
export const workerStats = () => ({ sent: workerCounts, inProgress: pool.reduce((sum, w) => sum + w.pending.size, 0) });

/**
 * `concurrency` workers taking items from one stream until it ends, `work` says stop (false), it fails, or the
 * signal aborts: no new item starts then; those in flight finish, listening to the same signal. `slowSource`:
 * standard input, whose writer may sit idle: an abort ends the wait (a listener per item, so not for a file).
 * `admit`, in the order items are taken, before any later one: false stops the pool there (a bad line).
 */
export async function runPool<T>(
  items: AsyncIterable<T>,
  options: { concurrency: number; signal: AbortSignal; slowSource: boolean; admit?: (item: T) => boolean },
  work: (item: T) => Promise<boolean>,
) {
  const { signal } = options;
  const iterator = items[Symbol.asyncIterator]();
  // A file's lines come straight from the iterator (no promise of ours per line); a slow source's, or the abort.
  const next = options.slowSource
    ? async (): Promise<IteratorResult<T>> => {
        const settled = await settle(iterator.next(), signal);
        if (settled === 'waited') return { done: true, value: undefined };
        if ('error' in settled) throw settled.error;
        return settled.result;
      }
    : () => iterator.next();
  const outcome: { stopped: boolean; readError?: unknown } = { stopped: false };
  const worker = async () => {
    while (!outcome.stopped && !signal.aborted) {
      let taken: IteratorResult<T>;
      try {
        taken = await next();
      } catch (error) {
        outcome.readError ??= error;
        outcome.stopped = true;
        return;
      }
      // Another worker may have stopped the pool while this one waited for its item.
      if (taken.done || outcome.stopped || signal.aborted) return;
      if (options.admit && !options.admit(taken.value)) {
        outcome.stopped = true;
        return;
      }
      if (!(await work(taken.value))) outcome.stopped = true;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return outcome;
}

type Settled<T> = { result: IteratorResult<T> } | { error: unknown } | 'waited';

/**
 * The next item, or 'waited' when the deadline passed or the signal aborted first. Not Promise.race with
 * one long-lived "aborted" promise: every race would leave a reaction on it holding that race's result
 * (a whole document), so memory grew with the input (a 1 GiB batch peaked at 1.4 GiB RSS). Here the
 * abort listener goes with the item.
 */
export function settle<T>(
  next: Promise<IteratorResult<T>>,
  signal: AbortSignal,
  deadline?: number,
): Promise<Settled<T>> {
  if (signal.aborted) return Promise.resolve('waited');
  return new Promise((resolve) => {
    const stop = () => finish('waited');
    const timer = deadline === undefined ? undefined : setTimeout(stop, Math.max(deadline - Date.now(), 0));
    signal.addEventListener('abort', stop, { once: true });
    function finish(settled: Settled<T>) {
      if (timer !== undefined) clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      resolve(settled);
    }
    next.then(
      (result) => finish({ result }),
      (error: unknown) => finish({ error }),
    );
  });
}

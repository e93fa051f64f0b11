import type { Column, Context } from '../../context.js';
import { CliError, NetworkError, UsageError } from '../../errors.js';
import type { RequestContext } from '../kit.js';
import type { Flags, FlagValues } from '../verb.js';

/**
 * `--wait` of `docs sync` and `threads sync`: polls until preparation is ready, with a progress bar from
 * chunks_completed/chunks_total, bounded by --timeout. Ctrl-C ends the wait (the clock's sleep rejects
 * with CancelError); the sync itself has already been accepted by then.
 */

export interface Preparable {
  prepare_status?: string | null | undefined;
  chunks_total?: number | null | undefined;
  chunks_completed?: number | null | undefined;
}

export interface WaitOptions<T extends Preparable> {
  /** "document doc_123", for messages. */
  what: string;
  /** The command that shows the item later, for the timeout's hint. */
  showCommand: string;
  initial: T;
  fetch: () => Promise<T>;
  timeoutSeconds: number;
  intervalMs?: number;
}

/** What waiting uses of the context: the output for the progress bar, the clock, Ctrl-C. */
export type WaitContext = Pick<Context, 'out' | 'clock' | 'signal'>;

export const DEFAULT_WAIT_SECONDS = 300;

/** `--timeout SECONDS` of a command that waits (`sync --wait`, `oauth connect`). */
export const TIMEOUT_FLAG = {
  value: '<seconds>',
  type: 'int',
  min: 1,
  max: 86_400,
  unit: 'seconds',
  help: 'with --wait: give up after this many seconds (default 300)',
} as const satisfies Flags[string];

/** The flags of `docs sync` and `threads sync`. */
export const WAIT_FLAGS = {
  wait: { help: 'wait until preparation is ready, with a progress bar' },
  timeout: TIMEOUT_FLAG,
} as const satisfies Flags;

export interface WaitFlags {
  wait: boolean;
  timeoutSeconds: number;
}

/** --timeout bounds the wait: without --wait there is none, and a limit silently ignored would mislead. */
export function waitFlags(given: FlagValues<typeof WAIT_FLAGS>): WaitFlags {
  if (given.timeout !== undefined && !given.wait) {
    throw new UsageError('--timeout: only applies with --wait: add --wait, or leave --timeout out');
  }
  return { wait: given.wait, timeoutSeconds: given.timeout ?? DEFAULT_WAIT_SECONDS };
}

/** What `docs sync` and `threads sync` send: the sync, and the read that --wait repeats. */
export interface SyncTarget<T> {
  kind: 'document' | 'thread';
  id: string;
  sync: () => Promise<T>;
  fetch: () => Promise<T>;
}

/**
 * `docs sync` and `threads sync`: the sync (the charge is made and preparation starts), then with --wait
 * the progress until preparation is ready; the item is shown as it last came back.
 */
export async function syncAndShow<T extends Preparable & { token_count?: number | null }>(
  ctx: RequestContext & WaitContext,
  flags: WaitFlags,
  fields: Column<T>[],
  target: SyncTarget<T>,
): Promise<T> {
  let item = await target.sync();
  const tokens = typeof item.token_count === 'number' ? ` (token_count ${item.token_count})` : '';
  ctx.out.success(`Synced ${target.id}${tokens}`);
  if (flags.wait) {
    const group = target.kind === 'document' ? 'docs' : 'threads';
    item = await waitUntilReady(ctx, {
      what: `${target.kind} ${target.id}`,
      showCommand: `facectl ${group} get ${target.id}`,
      initial: item,
      fetch: target.fetch,
      timeoutSeconds: flags.timeoutSeconds,
    });
  }
  ctx.out.record(item, fields);
  return item;
}

const FAILED_STATES = new Set(['failed', 'error']);

export async function waitUntilReady<T extends Preparable>(ctx: WaitContext, options: WaitOptions<T>): Promise<T> {
  const interval = options.intervalMs ?? 250;
  const deadline = ctx.clock.now().getTime() + options.timeoutSeconds * 1000;
  const bar = ctx.out.progress('Preparing');
  let current = options.initial;
  try {
    for (;;) {
      const status = current.prepare_status ?? 'not started';
      bar.update(current.chunks_completed ?? 0, current.chunks_total ?? 1, status);
      if (current.prepare_status === 'ready') return current;
      if (FAILED_STATES.has(status)) {
        throw new CliError(`preparation of ${options.what} failed (prepare_status ${status})`, 1, {
          code: 'prepare_failed',
        });
      }
      if (ctx.clock.now().getTime() >= deadline) {
        const chunks = current.chunks_total ? `, ${current.chunks_completed ?? 0}/${current.chunks_total} chunks` : '';
        throw new NetworkError(
          `${options.what} was not ready after ${options.timeoutSeconds} s (prepare_status ${status}${chunks})`,
          {
            code: 'timeout',
            hint: `the sync was accepted; check later with \`${options.showCommand}\`, or wait longer with --timeout SECONDS`,
          },
        );
      }
      await ctx.clock.sleep(interval, ctx.signal);
      current = await options.fetch();
    }
  } finally {
    bar.stop();
  }
}

import * as z from 'zod';
import type { Context } from '../../context.js';
import { CliError, NetworkError } from '../../errors.js';
import { integerOption } from '../../input/options.js';
import { parseOptions } from '../kit.js';

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

export const DEFAULT_WAIT_SECONDS = 300;

const waitFlags = z.object({
  wait: z.boolean().default(false),
  timeout: integerOption(1, 86_400, 'seconds').optional(),
});

/** The `--wait` and `--timeout SECONDS` flags of the sync commands. */
export function parseWaitFlags(raw: Record<string, unknown>): { wait: boolean; timeoutSeconds: number } {
  const flags = parseOptions(waitFlags, raw);
  return { wait: flags.wait, timeoutSeconds: flags.timeout ?? DEFAULT_WAIT_SECONDS };
}
const FAILED_STATES = new Set(['failed', 'error']);

export async function waitUntilReady<T extends Preparable>(ctx: Context, options: WaitOptions<T>): Promise<T> {
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

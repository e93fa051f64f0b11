import type { Context, ProgressBar, Spinner } from '../../context.js';
import type { BatchSummary } from './submit-batch.js';

/** How a batch reports to people and scripts while it runs: its result lines, its progress, its summary. */

/**
 * The result lines of a batch, written to stdout together: one write per 32 KB or per 50 ms instead of
 * one per document (to a file or a pipe, each write is a system call, and a batch answers thousands of
 * documents a second). The lines keep their order; flush() writes what is left when the batch ends.
 */
export function batchedLines(ctx: Context): { add(line: string): void; flush(): void } {
  let pending = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (pending === '') return;
    const text = pending;
    pending = '';
    ctx.out.text(text);
  };
  return {
    add(line) {
      pending += line;
      if (pending.length >= 32 * 1024) flush();
      else timer ??= setTimeout(flush, 50);
    },
    flush,
  };
}

export function startProgress(
  ctx: Context,
  total: number | undefined,
): { update(done: number, failed: number): void; stop(): void } {
  if (total !== undefined) {
    const bar: ProgressBar = ctx.out.progress('Submitting');
    return {
      update: (done, failed) => bar.update(done, total, failed > 0 ? `(${failed} failed)` : undefined),
      stop: () => bar.stop(),
    };
  }
  const spinner: Spinner = ctx.out.spinner('Submitting documents');
  return {
    update: (done, failed) =>
      spinner.update(`Submitting documents: ${done} done${failed > 0 ? `, ${failed} failed` : ''}`),
    stop: () => spinner.stop(),
  };
}

export function printSummary(ctx: Context, summary: BatchSummary, unlisted: number): void {
  if (unlisted > 0) ctx.out.warn(`... and ${unlisted} more failures (use --json for every line)`);
  const of = summary.total !== undefined ? ` of ${summary.total}` : '';
  const failed = summary.failed > 0 ? `, ${summary.failed} failed` : '';
  const left = summary.total !== undefined ? summary.total - summary.submitted - summary.failed : 0;
  const notSent = left > 0 ? `, ${left} not sent` : '';
  const earlier = summary.earlier > 0 ? ` (${summary.earlier} of them by an earlier run, not sent again)` : '';
  ctx.out.info(
    `Submitted ${summary.submitted}${of} ${(summary.total ?? summary.submitted) === 1 ? 'document' : 'documents'}` +
      `${earlier}${failed}${notSent}. token_count total ${summary.tokens} ` +
      '(a preview: nothing is charged until each document is synced).',
  );
}

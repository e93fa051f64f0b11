import type { Column } from '../../context.js';
import type { AnyRoute } from '../../contract/route.js';
import { CancelError, CliError, NetworkError, UsageError } from '../../errors.js';
import { requireArgument, send, verb, withExtensionNote } from '../kit.js';
import type { Flags } from '../verb.js';

export const DEFAULT_WAIT_SECONDS = 300;

export const TIMEOUT_FLAG = {
  value: '<seconds>',
  type: 'int',
  min: 1,
  max: 86_400,
  unit: 'seconds',
  help: 'with --wait: give up after this many seconds (default 300)',
} as const satisfies Flags[string];

type Preparable = { [K in 'token_count' | 'chunks_total' | 'chunks_completed']?: number | null } & {
  prepare_status?: string | null;
  synced?: boolean | null;
};

/** `docs sync` and `threads sync` (extension endpoints); with --wait, a progress bar until preparation is ready. */
export function syncVerb<T extends Preparable>(
  kind: 'document' | 'thread',
  fields: Column<T>[],
  routes: () => Promise<{ sync: AnyRoute; get: AnyRoute }>,
) {
  const [group, example, billedTo] =
    kind === 'document' ? ['docs', 'doc_7Hc2Lq', 'the billing source'] : ['threads', 'thr_4kP9x', 'its billing source'];
  return verb({
    description: withExtensionNote(`Sync a ${kind}: its token_count is charged to ${billedTo} and preparation starts.`),
    args: [[`<${kind}_id>`, `the ${kind} id (${example.slice(0, 4)}...)`]],
    flags: { wait: { help: 'wait until preparation is ready, with a progress bar' }, timeout: TIMEOUT_FLAG },
    examples: [
      `facectl ${group} sync ${example}`,
      `facectl ${group} sync ${example} --wait --timeout 60`,
      `facectl ${group} sync ${example} --wait --json --no-input | jq .prepare_status`,
    ],
    async run(ctx, given, id): Promise<T> {
      // Without --wait there is no wait to bound: a limit silently ignored would mislead.
      if (given.timeout !== undefined && !given.wait) {
        throw new UsageError('--timeout: only applies with --wait: add --wait, or leave --timeout out');
      }
      const { sync, get } = await routes();
      const params = { [`${kind}_id`]: requireArgument(`${kind}_id`, id) };
      let item = (await send(ctx, sync, { params })) as T;
      const tokens = typeof item.token_count === 'number' ? ` (token_count ${item.token_count})` : '';
      const [show, what] = [`facectl ${group} get ${id}`, `${kind} ${id}`];
      const timeout = given.timeout ?? DEFAULT_WAIT_SECONDS;
      const deadline = ctx.clock.now().getTime() + timeout * 1000;
      const bar = given.wait ? ctx.out.progress('Preparing') : undefined;
      let synced = false;
      try {
        while (bar) {
          const status = item.prepare_status ?? 'not started';
          bar.update(item.chunks_completed ?? 0, item.chunks_total ?? 1, status);
          if (status === 'ready') break;
          // Synced, then no longer (its content changed meanwhile): this sync's preparation will not be ready.
          if (synced && item.synced === false) {
            throw new CliError(`${what} is no longer synced: it changed while its preparation was awaited`, 1, {
              code: 'not_synced',
              hint: `sync it again: \`facectl ${group} sync ${id} --wait\``,
            });
          }
          synced ||= item.synced === true;
          if (status === 'failed' || status === 'error') {
            throw new CliError(`preparation of ${what} failed (prepare_status ${status})`, 1, {
              code: 'prepare_failed',
            });
          }
          if (ctx.clock.now().getTime() >= deadline) {
            const chunks = item.chunks_total ? `, ${item.chunks_completed ?? 0}/${item.chunks_total} chunks` : '';
            throw new NetworkError(`${what} was not ready after ${timeout} s (prepare_status ${status}${chunks})`, {
              code: 'timeout',
              hint: `the sync was accepted; check later with \`${show}\`, or wait longer with --timeout SECONDS`,
            });
          }
          await ctx.clock.sleep(250, ctx.signal);
          item = (await send(ctx, get, { params })) as T;
        }
      } catch (error) {
        // Ctrl-C (or SIGTERM), or the service gone meanwhile, ends the wait, not the sync: say so, and how to look again.
        if (error instanceof CancelError) {
          const hint = `the sync was accepted and preparation goes on at the service; \`${show}\` shows where it is`;
          throw new CancelError(error.message, { exitCode: error.exitCode, hint });
        }
        if (!(error instanceof NetworkError) || error.code === 'timeout') throw error;
        // Not "goes on at the service": that is what stopped answering.
        const again = `the sync was accepted; once the service answers again, \`${show}\` shows where its preparation is`;
        throw new NetworkError(error.message, {
          code: error.code,
          hint: `${again}${error.hint ? `; ${error.hint}` : ''}`,
          cause: error,
        });
      } finally {
        bar?.stop();
      }
      ctx.out.record(item, fields, `the ${kind} was synced all the same (\`${show}\`)`);
      // After the record, as every command's; with --wait once ready: a newcomer read it as done while the bar had far to go.
      ctx.out.success(`Synced ${id}${tokens}${given.wait ? ', ready' : ''}`);
      return item;
    },
  });
}

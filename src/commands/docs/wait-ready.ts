import type { Column, Context } from '../../context.js';
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

interface Preparable {
  token_count?: number | null;
  prepare_status?: string | null;
  chunks_total?: number | null;
  chunks_completed?: number | null;
}

/**
 * `docs sync` and `threads sync` (extension endpoints): the sync, then with --wait a progress bar from
 * chunks_completed/chunks_total until preparation is ready, bounded by --timeout.
 */
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
      const fetch = async () => (await send(ctx, get, { params })) as T;
      let item = (await send(ctx, sync, { params })) as T;
      const tokens = typeof item.token_count === 'number' ? ` (token_count ${item.token_count})` : '';
      ctx.out.success(`Synced ${id}${tokens}`);
      const show = `facectl ${group} get ${id}`;
      if (given.wait) item = await waitUntilReady(ctx, `${kind} ${id}`, show, item, fetch, given.timeout);
      ctx.out.record(item, fields, `the ${kind} was synced all the same (\`${show}\`)`);
      return item;
    },
  });
}

async function waitUntilReady<T extends Preparable>(
  ctx: Context,
  what: string,
  showCommand: string,
  initial: T,
  fetch: () => Promise<T>,
  timeoutSeconds = DEFAULT_WAIT_SECONDS,
): Promise<T> {
  const deadline = ctx.clock.now().getTime() + timeoutSeconds * 1000;
  const bar = ctx.out.progress('Preparing');
  let current = initial;
  try {
    for (;;) {
      const status = current.prepare_status ?? 'not started';
      bar.update(current.chunks_completed ?? 0, current.chunks_total ?? 1, status);
      if (current.prepare_status === 'ready') return current;
      if (status === 'failed' || status === 'error') {
        throw new CliError(`preparation of ${what} failed (prepare_status ${status})`, 1, { code: 'prepare_failed' });
      }
      if (ctx.clock.now().getTime() >= deadline) {
        const chunks = current.chunks_total ? `, ${current.chunks_completed ?? 0}/${current.chunks_total} chunks` : '';
        throw new NetworkError(`${what} was not ready after ${timeoutSeconds} s (prepare_status ${status}${chunks})`, {
          code: 'timeout',
          hint: `the sync was accepted; check later with \`${showCommand}\`, or wait longer with --timeout SECONDS`,
        });
      }
      await ctx.clock.sleep(250, ctx.signal);
      current = await fetch();
    }
  } catch (error) {
    // Ctrl-C (or SIGTERM) ends the wait, not the sync: say so, and how to look again.
    if (!(error instanceof CancelError)) throw error;
    throw new CancelError(error.message, {
      exitCode: error.exitCode,
      hint: `the sync was accepted and preparation goes on at the service; \`${showCommand}\` shows where it is`,
    });
  } finally {
    bar.stop();
  }
}

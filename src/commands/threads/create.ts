import type { Context } from '../../context.js';
import type { ThreadCreateRequest } from '../../contract/threads.js';
import { BILLING_SOURCES } from '../../contract/values.js';
import { checkAlias, requestBody, requireAliasAndLabel, send, verb } from '../kit.js';
import type { Flags, FlagValues } from '../verb.js';
import { THREAD_FIELDS } from './get.js';

const flags = {
  alias: { value: '<alias>', help: 'alias of the face the thread belongs to', check: checkAlias },
  label: { value: '<label>', help: 'label of the thread' },
  interviewerBillingSource: {
    value: '<source>',
    help: 'overrides the automatic choice (oauth, then compile quota, then credits)',
    choices: BILLING_SOURCES,
  },
} as const satisfies Flags;

export default verb({
  description: 'Create a compile thread for a face. On a terminal, a missing --alias or --label is asked for.',
  flags,
  examples: [
    'facectl threads create --alias ada-lovelace --label "Interview 1"',
    'facectl threads create --alias ada-lovelace --label "Interview 2" --interviewer-billing-source credits',
    'facectl threads create --alias ada-lovelace --label nightly --json --no-input | jq -r .thread_id',
  ],
  run: async (ctx, given) => runCreateThread(ctx, { ...given, ...(await requireAliasAndLabel(ctx, given, 'thread')) }),
});

export async function runCreateThread(ctx: Context, opts: FlagValues<typeof flags> & { alias: string; label: string }) {
  const { createThread } = await import('../../contract/threads.js');
  const body: ThreadCreateRequest = requestBody(opts);
  const thread = await send(ctx, createThread, { body });
  const id = thread.thread_id;
  const written = `the thread was created all the same: ${id} (\`facectl threads get ${id}\`); creating again makes another`;
  ctx.out.record(thread, THREAD_FIELDS, written);
  ctx.out.success(`Created thread ${thread.thread_id} for ${thread.alias ?? opts.alias}`);
  return thread;
}

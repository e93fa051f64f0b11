import * as z from 'zod';
import { createThread, type Thread, type ThreadCreateRequest } from '../../contract/threads.js';
import { aliasOption, billingSourceOption, checkAlias } from '../../input/options.js';
import { parseOptions, type PromptContext, type RequestContext, requestBody, requireValue } from '../kit.js';
import { THREAD_FIELDS } from './fields.js';

/** `facectl threads create`: a compile thread; alias and label are asked for on a terminal. */

const optionsSchema = z.object({
  alias: aliasOption.optional(),
  label: z.string().optional(),
  interviewerBillingSource: billingSourceOption.optional(),
});

/** The flags once resolved: alias and label given or asked for. */
export type CreateThreadOptions = z.output<typeof optionsSchema> & { alias: string; label: string };

export async function resolveCreateThreadOptions(
  ctx: PromptContext,
  raw: Record<string, unknown>,
): Promise<CreateThreadOptions> {
  const flags = parseOptions(optionsSchema, raw);
  const alias = await requireValue(ctx, {
    flag: '--alias',
    value: flags.alias,
    message: 'Alias of the face the thread belongs to',
    validate: checkAlias,
  });
  const label = await requireValue(ctx, { flag: '--label', value: flags.label, message: 'Label of the thread' });
  return { ...flags, alias, label };
}

export async function createThreadAction(
  ctx: RequestContext & PromptContext,
  raw: Record<string, unknown>,
): Promise<void> {
  await runCreateThread(ctx, await resolveCreateThreadOptions(ctx, raw));
}

export async function runCreateThread(ctx: RequestContext, opts: CreateThreadOptions): Promise<Thread> {
  const body: ThreadCreateRequest = requestBody(opts);
  const api = await ctx.api();
  const thread = await api.call(createThread, { body }, { signal: ctx.signal });
  ctx.out.record(thread, THREAD_FIELDS);
  ctx.out.success(`Created thread ${thread.thread_id ?? ''} for ${thread.alias ?? opts.alias}`);
  return thread;
}

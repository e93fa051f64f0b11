import * as z from 'zod';
import type { Context } from '../../context.js';
import { createThread, type Thread, type ThreadCreateRequest } from '../../contract/threads.js';
import { aliasOption, billingSourceOption, checkAlias } from '../../input/options.js';
import { parseOptions, requireValue } from '../kit.js';
import { THREAD_FIELDS } from './fields.js';

/** `facectl threads create`: a compile thread; alias and label are asked for on a terminal. */

export interface CreateThreadOptions {
  alias: string;
  label: string;
  interviewerBillingSource?: ThreadCreateRequest['interviewer_billing_source'];
}

const optionsSchema = z.object({
  alias: aliasOption.optional(),
  label: z.string().max(500, { error: 'must be at most 500 characters' }).optional(),
  interviewerBillingSource: billingSourceOption.optional(),
});

export async function resolveCreateThreadOptions(
  ctx: Context,
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
  return { alias, label, interviewerBillingSource: flags.interviewerBillingSource };
}

export async function createThreadAction(ctx: Context, raw: Record<string, unknown>): Promise<void> {
  await runCreateThread(ctx, await resolveCreateThreadOptions(ctx, raw));
}

export async function runCreateThread(ctx: Context, opts: CreateThreadOptions): Promise<Thread> {
  const body: ThreadCreateRequest = { alias: opts.alias, label: opts.label };
  if (opts.interviewerBillingSource !== undefined) body.interviewer_billing_source = opts.interviewerBillingSource;
  const api = await ctx.api();
  const thread = await api.call(createThread, { body }, { signal: ctx.signal });
  ctx.out.record(thread, THREAD_FIELDS);
  ctx.out.success(`Created thread ${thread.thread_id ?? ''} for ${thread.alias ?? opts.alias}`);
  return thread;
}

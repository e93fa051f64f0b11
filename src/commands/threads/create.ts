import * as z from 'zod';
import { createThread, type Thread, type ThreadCreateRequest } from '../../contract/threads.js';
import { aliasOption, billingSourceOption } from '../../input/options.js';
import { requireAliasAndLabel } from '../alias-label.js';
import { parseOptions, type PromptContext, type RequestContext, requestBody, send } from '../kit.js';
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
  return { ...flags, ...(await requireAliasAndLabel(ctx, flags, 'thread')) };
}

export async function createThreadAction(
  ctx: RequestContext & PromptContext,
  raw: Record<string, unknown>,
): Promise<void> {
  await runCreateThread(ctx, await resolveCreateThreadOptions(ctx, raw));
}

export async function runCreateThread(ctx: RequestContext, opts: CreateThreadOptions): Promise<Thread> {
  const body: ThreadCreateRequest = requestBody(opts);
  const thread = await send(ctx, createThread, { body });
  ctx.out.record(thread, THREAD_FIELDS);
  ctx.out.success(`Created thread ${thread.thread_id ?? ''} for ${thread.alias ?? opts.alias}`);
  return thread;
}

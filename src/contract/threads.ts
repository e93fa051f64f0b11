import * as z from 'zod';
import { alias, billingSource, dateTime, pathSegment } from './common.js';
import { defineRoute } from './route.js';

/**
 * A message as sent. The spec does not say which fields are required; the local service requires all
 * three, so a transcript always says who spoke.
 */
export const threadMessageRequest = z.strictObject({
  role: z.string().min(1, { error: 'must not be empty' }),
  content: z.string(),
  from: z.string(),
});
export type ThreadMessageRequest = z.input<typeof threadMessageRequest>;

/** A message as answered: `from` comes back as `name`. */
export const threadMessageResponse = z.looseObject({
  role: z.string().optional(),
  content: z.string().optional(),
  name: z.string().optional(),
});

export const threadCreateRequest = z.strictObject({
  alias,
  label: z.string().min(1, { error: 'must not be empty' }).max(500),
  interviewer_billing_source: billingSource.nullish(),
});
export type ThreadCreateRequest = z.input<typeof threadCreateRequest>;

export const replaceMessagesRequest = z.strictObject({
  messages: z.array(threadMessageRequest),
});
export type ReplaceMessagesRequest = z.input<typeof replaceMessagesRequest>;

/**
 * The Compile thread. The spec does not say which of its fields are always present, so none is
 * required here; the local service always sends all of them.
 */
export const thread = z.looseObject({
  thread_id: z.string().optional(),
  label: z.string().optional(),
  alias: z.string().optional(),
  source: z.string().optional(),
  messages: z.array(threadMessageResponse).optional(),
  message_count: z.int().optional(),
  messages_archived: z.int().optional(),
  synced: z.boolean().optional(),
  token_count: z.int().optional(),
  tokens_used: z.int().optional(),
  tokens_limit: z.int().optional(),
  created_at: dateTime.optional(),
  updated_at: dateTime.optional(),
  interviewer_billing_source: billingSource.optional(),
  prepare_status: z.string().nullish(),
  chunks_total: z.int().nullish(),
  chunks_completed: z.int().nullish(),
  current_counts: z.record(z.string(), z.unknown()).optional(),
});
export type Thread = z.output<typeof thread>;

export const threadIdParams = z.strictObject({ thread_id: pathSegment });

export const createThread = defineRoute({
  name: 'createThread',
  method: 'POST',
  path: '/v1/compile/threads',
  summary: 'Create a compile thread (the response shape is the local service choice: the thread).',
  params: z.object({}),
  body: threadCreateRequest,
  response: thread,
  idempotent: true,
  scope: 'compile:write',
});

export const replaceThreadMessages = defineRoute({
  name: 'replaceThreadMessages',
  method: 'PATCH',
  path: '/v1/compile/threads/{thread_id}/messages',
  summary: 'Replace every message of a thread; the old ones are archived.',
  params: threadIdParams,
  body: replaceMessagesRequest,
  response: thread,
  scope: 'compile:write',
});

export const getThread = defineRoute({
  name: 'getThread',
  method: 'GET',
  path: '/v1/compile/threads/{thread_id}',
  summary: 'Read a thread.',
  params: threadIdParams,
  body: undefined,
  response: thread,
  extension: true,
  scope: 'compile:read',
});

export const syncThread = defineRoute({
  name: 'syncThread',
  method: 'POST',
  path: '/v1/compile/threads/{thread_id}/sync',
  summary: 'Sync a thread: charge its token_count to the billing source and start preparation.',
  params: threadIdParams,
  body: undefined,
  response: thread,
  extension: true,
  idempotent: true,
  scope: 'compile:write',
});

import * as z from 'zod';
import { alias, billingSource, dateTime, pathSegment, serviceAlias } from './common.js';
import { defineRoute } from './route.js';

/** A message as sent, as the seed states it: whether each field is required is "not shown". */
export const threadMessageRequest = z.looseObject({
  role: z.string().optional(),
  content: z.string().optional(),
  from: z.string().optional(),
});
export type ThreadMessageRequest = z.input<typeof threadMessageRequest>;

/** The local service requires all three (so a transcript always says who spoke), no unknown field. */
export const threadMessageServiceRequest = z.strictObject({
  role: z.string().min(1, { error: 'must not be empty' }),
  content: z.string(),
  from: z.string(),
});

/** A message as answered: `from` comes back as `name`. */
export const threadMessageResponse = z.looseObject({
  role: z.string().optional(),
  content: z.string().optional(),
  name: z.string().optional(),
});

/** Body of POST /v1/compile/threads as the seed states it (required fields: not shown). */
export const threadCreateRequest = z.looseObject({
  alias: alias.optional(),
  label: z.string().optional(),
  interviewer_billing_source: billingSource.optional(),
});
export type ThreadCreateRequest = z.input<typeof threadCreateRequest>;

/** The local service's own rules: alias and label required, a slug alias, label up to 500, null = automatic. */
export const threadCreateServiceRequest = z.strictObject({
  alias: serviceAlias,
  label: z.string().min(1, { error: 'must not be empty' }).max(500),
  interviewer_billing_source: billingSource.nullish(),
});

export const replaceMessagesRequest = z.looseObject({
  messages: z.array(threadMessageRequest),
});
export type ReplaceMessagesRequest = z.input<typeof replaceMessagesRequest>;

export const replaceMessagesServiceRequest = z.strictObject({
  messages: z.array(threadMessageServiceRequest),
});

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
  prepare_status: z.string().optional(),
  chunks_total: z.int().optional(),
  chunks_completed: z.int().optional(),
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
  serviceBody: threadCreateServiceRequest,
  successStatus: 201,
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
  serviceBody: replaceMessagesServiceRequest,
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

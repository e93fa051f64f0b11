import * as z from 'zod/mini';
import { alias, billingSource, dateTime, noParams, pathSegment, serviceAlias } from './common.js';
import { defineRoute } from './route.js';

/** A message as sent, as the seed states it: whether each field is required is "not shown". */
export const threadMessageRequest = z.looseObject({
  role: z.optional(z.string()),
  content: z.optional(z.string()),
  from: z.optional(z.string()),
});
export type ThreadMessageRequest = z.input<typeof threadMessageRequest>;

/** The local service requires all three (so a transcript always says who spoke), no unknown field. */
export const threadMessageServiceRequest = z.strictObject({
  role: z.string().check(z.minLength(1, { error: 'must not be empty' })),
  content: z.string(),
  from: z.string(),
});

/** A message as answered: `from` comes back as `name`. */
export const threadMessageResponse = z.looseObject({
  role: z.optional(z.string()),
  content: z.optional(z.string()),
  name: z.optional(z.string()),
});

/** Body of POST /v1/compile/threads as the seed states it (required fields: not shown). */
export const threadCreateRequest = z.looseObject({
  alias: z.optional(alias),
  label: z.optional(z.string()),
  interviewer_billing_source: z.optional(billingSource),
});
export type ThreadCreateRequest = z.input<typeof threadCreateRequest>;

/** The local service's own rules (a null billing source: automatic). */
export const threadCreateServiceRequest = z.strictObject({
  alias: serviceAlias,
  label: z.string().check(z.minLength(1, { error: 'must not be empty' }), z.maxLength(500)),
  interviewer_billing_source: z.nullish(billingSource),
});

export const replaceMessagesRequest = z.looseObject({ messages: z.array(threadMessageRequest) });
export type ReplaceMessagesRequest = z.input<typeof replaceMessagesRequest>;

export const replaceMessagesServiceRequest = z.strictObject({ messages: z.array(threadMessageServiceRequest) });

/** The spec does not say which fields are always present, so none is required; the local service sends all. */
export const thread = z.looseObject({
  thread_id: z.optional(z.string()),
  label: z.optional(z.string()),
  alias: z.optional(z.string()),
  source: z.optional(z.string()),
  messages: z.optional(z.array(threadMessageResponse)),
  message_count: z.optional(z.int()),
  messages_archived: z.optional(z.int()),
  synced: z.optional(z.boolean()),
  token_count: z.optional(z.int()),
  tokens_used: z.optional(z.int()),
  tokens_limit: z.optional(z.int()),
  created_at: z.optional(dateTime),
  updated_at: z.optional(dateTime),
  interviewer_billing_source: z.optional(billingSource),
  prepare_status: z.optional(z.string()),
  chunks_total: z.optional(z.int()),
  chunks_completed: z.optional(z.int()),
  current_counts: z.optional(z.record(z.string(), z.unknown())),
});
export type Thread = z.output<typeof thread>;

export const threadIdParams = z.strictObject({ thread_id: pathSegment });
const onThread = { params: threadIdParams, response: thread } as const;

export const createThread = defineRoute({
  name: 'createThread',
  method: 'POST',
  path: '/v1/compile/threads',
  summary: 'Create a compile thread (the response shape is the local service choice: the thread).',
  params: noParams,
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
  ...onThread,
  body: replaceMessagesRequest,
  serviceBody: replaceMessagesServiceRequest,
  scope: 'compile:write',
});

export const getThread = defineRoute({
  name: 'getThread',
  method: 'GET',
  path: '/v1/compile/threads/{thread_id}',
  summary: 'Read a thread.',
  ...onThread,
  extension: true,
  scope: 'compile:read',
});

export const syncThread = defineRoute({
  name: 'syncThread',
  method: 'POST',
  path: '/v1/compile/threads/{thread_id}/sync',
  summary: 'Sync a thread: charge its token_count to the billing source and start preparation.',
  ...onThread,
  extension: true,
  idempotent: true,
  scope: 'compile:write',
});

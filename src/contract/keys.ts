import * as z from 'zod';
import { dateTime, noParams, scope, seedScope } from './common.js';
import { defineRoute } from './route.js';

/** Body of POST /v1/auth/api-keys as the seed states it: every field optional and nullable. */
export const apiKeyCreateRequest = z.looseObject({
  name: z.string().nullish(),
  expires_in_days: z.int({ error: 'must be a whole number of days' }).nullish(),
  scopes: z.array(seedScope).nullish(),
  budget_usd: z.number({ error: 'must be a number of US dollars' }).nullish(),
  allowed_face_ids: z.array(z.string()).nullish(),
  allowed_llm_models: z.array(z.string()).nullish(),
});
export type ApiKeyCreateRequest = z.input<typeof apiKeyCreateRequest>;

/** The local service's own rules for it: name cap, 1-365 days, its scope grammar, no unknown field. */
export const apiKeyCreateServiceRequest = z.strictObject({
  name: z.string().max(200).nullish(),
  expires_in_days: z
    .int({ error: 'must be a whole number of days' })
    .min(1, { error: 'must be between 1 and 365 days' })
    .max(365, { error: 'must be between 1 and 365 days' })
    .nullish(),
  scopes: z.array(scope).min(1).nullish(),
  budget_usd: z
    .number({ error: 'must be a number of US dollars' })
    .refine(Number.isFinite, { error: 'must be a finite number of US dollars' })
    .min(0, { error: 'must be 0 or more US dollars' })
    .nullish(),
  allowed_face_ids: z.array(z.string().min(1)).nullish(),
  allowed_llm_models: z.array(z.string().min(1)).nullish(),
});

/** Response of POST /v1/auth/api-keys: the only response that ever carries the full secret. */
export const apiKey = z.looseObject({
  key: z.string(),
  id: z.string(),
  name: z.string().nullable(),
  created_at: dateTime,
  expires_at: dateTime.nullable(),
  key_prefix: z.string(),
  budget_usd: z.number().nullable(),
  spent_usd: z.number(),
  allowed_face_ids: z.array(z.string()).nullable(),
  allowed_llm_models: z.array(z.string()).nullable(),
});
export type ApiKey = z.output<typeof apiKey>;

/**
 * Extension: the key the request authenticates with, as above without its secret, plus what the
 * service tells about it (scopes, plan). Used by `auth status` and `doctor`.
 */
export const currentApiKey = apiKey.omit({ key: true }).extend({
  scopes: z.array(z.string()).optional(),
  plan: z.string().optional(),
});
export type CurrentApiKey = z.output<typeof currentApiKey>;

export const createApiKey = defineRoute({
  name: 'createApiKey',
  method: 'POST',
  path: '/v1/auth/api-keys',
  summary: 'Create an API key; the response holds the full secret once.',
  params: noParams,
  body: apiKeyCreateRequest,
  serviceBody: apiKeyCreateServiceRequest,
  successStatus: 201,
  response: apiKey,
  idempotent: true,
  scope: 'keys:write',
});

export const getCurrentApiKey = defineRoute({
  name: 'getCurrentApiKey',
  method: 'GET',
  path: '/v1/auth/api-keys/current',
  summary: 'Describe the key this request authenticates with (no secret).',
  params: noParams,
  body: undefined,
  response: currentApiKey,
  extension: true,
  scope: null,
});

import * as z from 'zod/mini';
import { dateTime, noParams, scope, seedScope } from './common.js';
import { defineRoute } from './route.js';

const wholeDays = z.int({ error: 'must be a whole number of days' });
const dollars = z.number({ error: 'must be a number of US dollars' });

/** Body of POST /v1/auth/api-keys as the seed states it: every field optional and nullable. */
export const apiKeyCreateRequest = z.looseObject({
  name: z.nullish(z.string()),
  expires_in_days: z.nullish(wholeDays),
  scopes: z.nullish(z.array(seedScope)),
  budget_usd: z.nullish(dollars),
  allowed_face_ids: z.nullish(z.array(z.string())),
  allowed_llm_models: z.nullish(z.array(z.string())),
});
export type ApiKeyCreateRequest = z.input<typeof apiKeyCreateRequest>;

const days = { error: 'must be between 1 and 365 days' };
/** The local service's own rules for it: name cap, 1-365 days, its scope grammar, no unknown field. */
export const apiKeyCreateServiceRequest = z.strictObject({
  name: z.nullish(z.string().check(z.maxLength(200))),
  expires_in_days: z.nullish(wholeDays.check(z.gte(1, days), z.lte(365, days))),
  scopes: z.nullish(z.array(scope).check(z.minLength(1))),
  budget_usd: z.nullish(
    dollars.check(
      z.refine(Number.isFinite, { error: 'must be a finite number of US dollars' }),
      z.gte(0, { error: 'must be 0 or more US dollars' }),
    ),
  ),
  allowed_face_ids: z.nullish(z.array(z.string().check(z.minLength(1)))),
  allowed_llm_models: z.nullish(z.array(z.string().check(z.minLength(1)))),
});

/** Response of POST /v1/auth/api-keys: the only response that ever carries the full secret. */
export const apiKey = z.looseObject({
  key: z.string(),
  id: z.string(),
  name: z.nullable(z.string()),
  created_at: dateTime,
  expires_at: z.nullable(dateTime),
  key_prefix: z.string(),
  budget_usd: z.nullable(z.number()),
  spent_usd: z.number(),
  allowed_face_ids: z.nullable(z.array(z.string())),
  allowed_llm_models: z.nullable(z.array(z.string())),
});
export type ApiKey = z.output<typeof apiKey>;

/** Extension: the key the request authenticates with, without its secret (`auth status`, `doctor`). */
export const currentApiKey = z.extend(z.omit(apiKey, { key: true }), {
  scopes: z.optional(z.array(z.string())),
  plan: z.optional(z.string()),
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
  response: currentApiKey,
  extension: true,
  scope: null,
});

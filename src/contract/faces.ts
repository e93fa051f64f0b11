import * as z from 'zod/mini';
import { alias, noParams, pathSegment, serviceAlias } from './common.js';
import { defineRoute } from './route.js';

/** A face's optional settings, as sent and as answered. */
const faceSettings = {
  basic_facts: z.optional(z.record(z.string(), z.unknown())),
  default_tools: z.nullish(z.array(z.string())),
  default_model: z.nullish(z.string()),
  formula: z.nullish(z.string()),
};

/** Body of POST /v1/faces as the seed states it: name and alias required. */
export const faceCreateRequest = z.looseObject({ name: z.string(), alias, ...faceSettings });
export type FaceCreateRequest = z.input<typeof faceCreateRequest>;

/** The local service's own rules: name 1-200 characters, a slug alias, no unknown field. */
export const faceCreateServiceRequest = z.strictObject({
  name: z.string().check(z.minLength(1, { error: 'must not be empty' }), z.maxLength(200)),
  alias: serviceAlias,
  basic_facts: z.optional(z.record(z.string(), z.unknown())),
  default_tools: z.nullish(z.array(z.string().check(z.minLength(1)))),
  default_model: z.nullish(z.string().check(z.minLength(1))),
  formula: z.nullish(z.string()),
});

/** component_counts: four integer members, each 0 by default. */
export const componentCounts = z.looseObject({
  alpha: z._default(z.int(), 0),
  beta: z._default(z.int(), 0),
  delta: z._default(z.int(), 0),
  epsilon: z._default(z.int(), 0),
});

export const face = z.looseObject({
  alias: z.string(),
  created: z.int(),
  owned_by: z.string(),
  uid: z.nullish(z.string()),
  object: z._default(z.string(), 'face'),
  name: z.nullish(z.string()),
  ...faceSettings,
  profile_token_count: z.nullish(z.int()),
  total_tokens_saved: z.nullish(z.int()),
  component_counts: z.optional(componentCounts),
  warnings: z.nullish(z.array(z.string())),
});
export type Face = z.output<typeof face>;

export const faceIdParams = z.strictObject({ face_id: pathSegment });

export const createFace = defineRoute({
  name: 'createFace',
  method: 'POST',
  path: '/v1/faces',
  summary: 'Create a face.',
  params: noParams,
  body: faceCreateRequest,
  serviceBody: faceCreateServiceRequest,
  successStatus: 201,
  response: face,
  idempotent: true,
  scope: 'faces:write',
});

export const getFace = defineRoute({
  name: 'getFace',
  method: 'GET',
  path: '/v1/faces/{face_id}',
  summary: 'Read a face by uid or alias.',
  params: faceIdParams,
  response: face,
  extension: true,
  scope: 'faces:read',
});

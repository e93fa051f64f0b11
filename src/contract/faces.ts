import * as z from 'zod';
import { alias, pathSegment } from './common.js';
import { defineRoute } from './route.js';

export const faceCreateRequest = z.strictObject({
  name: z.string().min(1, { error: 'must not be empty' }).max(200),
  alias,
  basic_facts: z.record(z.string(), z.unknown()).optional(),
  default_tools: z.array(z.string().min(1)).nullish(),
  default_model: z.string().min(1).nullish(),
  formula: z.string().nullish(),
});
export type FaceCreateRequest = z.input<typeof faceCreateRequest>;

/** component_counts: four integer members, each 0 by default. */
export const componentCounts = z.looseObject({
  alpha: z.int().default(0),
  beta: z.int().default(0),
  delta: z.int().default(0),
  epsilon: z.int().default(0),
});

export const face = z.looseObject({
  alias: z.string(),
  created: z.int(),
  owned_by: z.string(),
  uid: z.string().nullish(),
  object: z.string().default('face'),
  name: z.string().nullish(),
  basic_facts: z.record(z.string(), z.unknown()).optional(),
  default_tools: z.array(z.string()).nullish(),
  default_model: z.string().nullish(),
  formula: z.string().nullish(),
  profile_token_count: z.int().nullish(),
  total_tokens_saved: z.int().nullish(),
  component_counts: componentCounts.optional(),
  warnings: z.array(z.string()).nullish(),
});
export type Face = z.output<typeof face>;

export const faceIdParams = z.strictObject({ face_id: pathSegment });

export const createFace = defineRoute({
  name: 'createFace',
  method: 'POST',
  path: '/v1/faces',
  summary: 'Create a face.',
  params: z.object({}),
  body: faceCreateRequest,
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
  body: undefined,
  response: face,
  extension: true,
  scope: 'faces:read',
});

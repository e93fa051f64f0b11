import * as z from 'zod/mini';
import './zod-messages.js';
import { BILLING_SOURCES, IMPORT_TYPES, PERSPECTIVES, SEED_SCOPE_PATTERN, SEED_SCOPE_RULE } from './values.js';

export * from './values.js';

/**
 * Building blocks of the routes. Responses are lenient where the spec is silent and strict where it speaks
 * (required fields, enums). A route's `body` is what the seed states, checked by the client; `serviceBody`
 * adds what only `facectl serve` decided ("local" below: docs/local-service-choices.md).
 */

export const dateTime = z.iso.datetime({ offset: true });
export const perspective = z.enum(PERSPECTIVES);
export const billingSource = z.enum(BILLING_SOURCES);
export const importType = z.enum(IMPORT_TYPES);

/** Face alias as the seed states it: a string. */
export const alias = z.string();

/** Face alias as the local service checks it: a slug of 3 to 64 characters (local). */
export const ALIAS_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const ALIAS_RULE = 'lower-case letters, digits and single hyphens, 3 to 64 characters (e.g. ada-lovelace)';
const slug = { error: `must be a slug: ${ALIAS_RULE}` };
export const serviceAlias = z.string().check(z.minLength(3, slug), z.maxLength(64, slug), z.regex(ALIAS_PATTERN, slug));

export const seedScope = z.string().check(z.regex(SEED_SCOPE_PATTERN, { error: `must have ${SEED_SCOPE_RULE}` }));

export const SCOPE_PATTERN = /^v1:(?:\*|(?:keys|faces|compile|oauth)(?::(?:read|write))?)$/;
export const SCOPE_RULE = 'v1:*, v1:<area> or v1:<area>:<read|write>, with area keys, faces, compile or oauth';
export const scope = z.string().check(z.regex(SCOPE_PATTERN, { error: `must be ${SCOPE_RULE}` }));
export type Scope = `v1:${string}`;

/** Error bodies of the service: `{detail, code}`; validation errors carry a list of field errors. */
export const fieldError = z.looseObject({
  loc: z.array(z.union([z.string(), z.number()])),
  msg: z.string(),
  type: z.string(),
});
export type FieldError = z.infer<typeof fieldError>;
export const errorBody = z.looseObject({
  detail: z.union([z.string(), z.array(fieldError)]),
  code: z.optional(z.string()),
});
export type ErrorBody = z.infer<typeof errorBody>;

/** The body of a successful DELETE: a detail message. */
export const detailMessage = z.looseObject({ detail: z.string() });

export const noParams = z.object({});

/** A path parameter: non-empty, and no lone UTF-16 surrogate (it has no UTF-8 form to put into the URL). */
export const pathSegment = z.string().check(
  z.minLength(1),
  z.refine((value: string) => value.isWellFormed(), { error: 'must be well-formed text (it holds a lone surrogate)' }),
);

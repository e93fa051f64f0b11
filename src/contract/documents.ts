import * as z from 'zod/mini';
import { alias, dateTime, importType, noParams, pathSegment, perspective, serviceAlias } from './common.js';
import { faceIdParams } from './faces.js';
import { defineRoute } from './route.js';

/** Body of POST /v1/compile/documents: the seed leaves what is required "not shown", so the client fills in nothing. */
export const documentCreateRequest = z.looseObject({
  alias: z.optional(alias),
  content: z.optional(z.string()),
  label: z.optional(z.string()),
  perspective: z.optional(perspective),
});
export type DocumentCreateRequest = z.input<typeof documentCreateRequest>;

export const DEFAULT_PERSPECTIVE = 'third-person';
/** The local service's own rules. */
export const documentCreateServiceRequest = z.strictObject({
  alias: serviceAlias,
  content: z.string().check(z.minLength(1, { error: 'must not be empty' })),
  label: z.string().check(z.minLength(1, { error: 'must not be empty' }), z.maxLength(500)),
  perspective: z._default(perspective, DEFAULT_PERSPECTIVE),
});

/** Extension: edit a document's content or label (version + 1, synced = false). */
export const documentEditRequest = z
  .strictObject({
    content: z.optional(z.string().check(z.minLength(1, { error: 'must not be empty' }))),
    label: z.optional(z.string().check(z.minLength(1, { error: 'must not be empty' }), z.maxLength(500))),
  })
  .check(
    z.refine((body: { content?: string; label?: string }) => body.content !== undefined || body.label !== undefined, {
      error: 'give content, label or both',
    }),
  );

/** The Document shape shared by import, submit, get and edit. */
export const document = z.looseObject({
  document_id: z.string(),
  alias: z.string(),
  label: z.string(),
  source: z.string(),
  version: z.int(),
  content: z.string(),
  token_count: z.int(),
  tokens_used: z.int(),
  tokens_limit: z.int(),
  synced: z.boolean(),
  created_at: dateTime,
  updated_at: dateTime,
  prepare_status: z.nullish(z.string()),
  chunks_total: z.nullish(z.int()),
  chunks_completed: z.nullish(z.int()),
  current_counts: z.optional(z.record(z.string(), z.unknown())),
  type: z._default(z.string(), 'document'),
});
export type Document = z.output<typeof document>;

export const documentIdParams = z.strictObject({ document_id: pathSegment });
const onDocument = { params: documentIdParams, response: document, extension: true } as const;

/** Body of POST /v1/faces/{face_id}/import: the seed's defaults are the service's to apply; the client sends what was given. */
export const importRequest = z.looseObject({
  url: z.string(),
  type: z.optional(z.string().check(z.meta({ default: 'document' }))),
  perspective: z.optional(perspective.check(z.meta({ default: 'third-person' }))),
  face_speaker: z.nullish(z.string()),
});

/** The local service's own rules. */
export const importServiceRequest = z.strictObject({
  url: z.string().check(z.minLength(1, { error: 'must not be empty' })),
  type: z._default(importType, 'document'),
  perspective: z._default(perspective, 'third-person'),
  face_speaker: z.nullish(z.string()),
});
export type ImportRequest = z.input<typeof importRequest>;

export const importIntoFace = defineRoute({
  name: 'importIntoFace',
  method: 'POST',
  path: '/v1/faces/{face_id}/import',
  summary: 'Import a document from a URL into a face; token_count is a preview until sync.',
  params: faceIdParams,
  body: importRequest,
  serviceBody: importServiceRequest,
  successStatus: 201,
  response: document,
  idempotent: true,
  scope: 'compile:write',
});

export const createDocument = defineRoute({
  name: 'createDocument',
  method: 'POST',
  path: '/v1/compile/documents',
  summary: 'Submit a document; token_count is a preview, the charge is made at sync.',
  params: noParams,
  body: documentCreateRequest,
  serviceBody: documentCreateServiceRequest,
  successStatus: 201,
  response: document,
  idempotent: true,
  scope: 'compile:write',
});

export const getDocument = defineRoute({
  name: 'getDocument',
  method: 'GET',
  path: '/v1/compile/documents/{document_id}',
  summary: 'Read a document.',
  ...onDocument,
  scope: 'compile:read',
});

export const editDocument = defineRoute({
  name: 'editDocument',
  method: 'PATCH',
  path: '/v1/compile/documents/{document_id}',
  summary: 'Edit a document: version + 1, synced = false.',
  ...onDocument,
  body: documentEditRequest,
  scope: 'compile:write',
});

export const syncDocument = defineRoute({
  name: 'syncDocument',
  method: 'POST',
  path: '/v1/compile/documents/{document_id}/sync',
  summary: 'Sync a document: charge its token_count and start preparation.',
  ...onDocument,
  idempotent: true,
  scope: 'compile:write',
});

import * as z from 'zod';
import { alias, dateTime, importType, pathSegment, perspective } from './common.js';
import { faceIdParams } from './faces.js';
import { defineRoute } from './route.js';

/**
 * Body of POST /v1/compile/documents. The spec does not say which fields are required; the local
 * service requires alias, label and a non-empty content, and defaults perspective to third-person.
 */
export const DEFAULT_PERSPECTIVE = 'third-person';

export const documentCreateRequest = z.strictObject({
  alias,
  content: z.string().min(1, { error: 'must not be empty' }),
  label: z.string().min(1, { error: 'must not be empty' }).max(500),
  perspective: perspective.default(DEFAULT_PERSPECTIVE),
});
export type DocumentCreateRequest = z.input<typeof documentCreateRequest>;

/** Extension: edit a document's content or label (version + 1, synced = false). */
export const documentEditRequest = z
  .strictObject({
    content: z.string().min(1, { error: 'must not be empty' }).optional(),
    label: z.string().min(1, { error: 'must not be empty' }).max(500).optional(),
  })
  .refine((body) => body.content !== undefined || body.label !== undefined, {
    error: 'give content, label or both',
  });

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
  prepare_status: z.string().nullish(),
  chunks_total: z.int().nullish(),
  chunks_completed: z.int().nullish(),
  current_counts: z.record(z.string(), z.unknown()).optional(),
  type: z.string().default('document'),
});
export type Document = z.output<typeof document>;

export const documentIdParams = z.strictObject({ document_id: pathSegment });

/** Body of POST /v1/faces/{face_id}/import: the service fetches the URL and creates a document. */
export const importRequest = z.strictObject({
  url: z.string().min(1, { error: 'must not be empty' }),
  type: importType.default('document'),
  perspective: perspective.default('third-person'),
  face_speaker: z.string().nullish(),
});
export type ImportRequest = z.input<typeof importRequest>;

export const importIntoFace = defineRoute({
  name: 'importIntoFace',
  method: 'POST',
  path: '/v1/faces/{face_id}/import',
  summary: 'Import a document from a URL into a face; token_count is a preview until sync.',
  params: faceIdParams,
  body: importRequest,
  response: document,
  idempotent: true,
  scope: 'compile:write',
});

export const createDocument = defineRoute({
  name: 'createDocument',
  method: 'POST',
  path: '/v1/compile/documents',
  summary: 'Submit a document; token_count is a preview, the charge is made at sync.',
  params: z.object({}),
  body: documentCreateRequest,
  response: document,
  idempotent: true,
  scope: 'compile:write',
});

export const getDocument = defineRoute({
  name: 'getDocument',
  method: 'GET',
  path: '/v1/compile/documents/{document_id}',
  summary: 'Read a document.',
  params: documentIdParams,
  body: undefined,
  response: document,
  extension: true,
  scope: 'compile:read',
});

export const editDocument = defineRoute({
  name: 'editDocument',
  method: 'PATCH',
  path: '/v1/compile/documents/{document_id}',
  summary: 'Edit a document: version + 1, synced = false.',
  params: documentIdParams,
  body: documentEditRequest,
  response: document,
  extension: true,
  scope: 'compile:write',
});

export const syncDocument = defineRoute({
  name: 'syncDocument',
  method: 'POST',
  path: '/v1/compile/documents/{document_id}/sync',
  summary: 'Sync a document: charge its token_count and start preparation.',
  params: documentIdParams,
  body: undefined,
  response: document,
  extension: true,
  idempotent: true,
  scope: 'compile:write',
});

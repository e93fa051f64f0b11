import * as z from 'zod';
import { type Document, type ImportRequest, importIntoFace } from '../contract/documents.js';
import { UsageError } from '../errors.js';
import { importTypeOption, perspectiveOption, requireArgument } from '../input/options.js';
import { DOCUMENT_FIELDS, notePreview } from './docs/fields.js';
import { parseOptions, type RequestContext, requestBody, send } from './kit.js';

/** `facectl import <face_id> <url>`: the service fetches the URL and adds it to the face as a document. */

const optionsSchema = z.object({
  type: importTypeOption.optional(),
  perspective: perspectiveOption.optional(),
  faceSpeaker: z.string().optional(),
});

export type ImportOptions = z.output<typeof optionsSchema> & { faceId: string; url: string };

export function parseImportOptions(raw: Record<string, unknown>, faceId: string, url: string): ImportOptions {
  const flags = parseOptions(optionsSchema, raw);
  return { faceId: requireArgument('face_id', faceId), url: checkUrl(url), ...flags };
}

/** The service fetches only http(s) URLs; anything else is refused here, before a request is made. */
function checkUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`<url>: ${JSON.stringify(value)} is not a URL`, {
      hint: 'give a full URL, e.g. https://example.com/notes.txt',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`<url>: only http:// and https:// URLs can be imported, not ${url.protocol}`);
  }
  return value;
}

export async function importAction(
  ctx: RequestContext,
  raw: Record<string, unknown>,
  faceId: string,
  url: string,
): Promise<void> {
  await runImport(ctx, parseImportOptions(raw, faceId, url));
}

export async function runImport(ctx: RequestContext, opts: ImportOptions): Promise<Document> {
  const { faceId, ...fields } = opts;
  const body: ImportRequest = requestBody(fields);
  const spinner = ctx.out.spinner(`Importing ${opts.url}`);
  let document: Document;
  try {
    document = await send(ctx, importIntoFace, { params: { face_id: faceId }, body });
  } finally {
    spinner.stop();
  }
  ctx.out.record(document, DOCUMENT_FIELDS);
  ctx.out.success(`Imported ${opts.url} into ${faceId} as ${document.document_id}`);
  notePreview(ctx, document);
  return document;
}

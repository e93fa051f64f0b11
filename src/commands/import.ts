import type { Context } from '../context.js';
import type { ImportRequest } from '../contract/documents.js';
import { IMPORT_TYPES, PERSPECTIVES } from '../contract/values.js';
import { UsageError } from '../errors.js';
import { DOCUMENT_FIELDS, notePreview } from './docs/fields.js';
import { notEmpty, requestBody, requireArgument, send, verb } from './kit.js';
import type { Flags, FlagValues } from './verb.js';

const flags = {
  type: {
    value: '<type>',
    help: 'the kind of document; the service defaults to document (facectl serve also takes transcript)',
    suggest: IMPORT_TYPES,
    check: notEmpty,
  },
  perspective: {
    value: '<perspective>',
    help: 'whose voice the document is in; the service defaults to third-person',
    choices: PERSPECTIVES,
  },
  faceSpeaker: { value: '<name>', help: 'in a transcript, the speaker who is the face' },
} as const satisfies Flags;

export default verb({
  description:
    'Import a document from a URL into a face: the service fetches the URL (http or https).\n\n' +
    'token_count in the answer is a preview: nothing is charged until the document is synced.',
  args: [
    ['<face_id>', 'the face uid (face_...) or its alias'],
    ['<url>', 'the http(s) URL the service fetches'],
  ],
  flags,
  examples: [
    'facectl import ada-lovelace https://example.com/letters/1843.txt',
    'facectl import ada-lovelace https://example.com/interview.txt --type transcript --face-speaker Ada',
    'facectl import face_3x9Qk2 https://example.com/notes.txt --json --no-input | jq -r .document_id',
  ],
  run: (ctx, given, faceId, url) =>
    runImport(ctx, { ...given, faceId: requireArgument('face_id', faceId), url: checkUrl(url) }),
});

/** The service fetches only http(s) URLs; anything else is refused here, before a request is made. */
function checkUrl(value: string): string {
  const url = URL.parse(value);
  if (!url) {
    throw new UsageError(`<url>: ${JSON.stringify(value)} is not a URL`, {
      hint: 'give a full URL, e.g. https://example.com/notes.txt',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`<url>: only http:// and https:// URLs can be imported, not ${url.protocol}`);
  }
  return value;
}

export async function runImport(ctx: Context, opts: FlagValues<typeof flags> & { faceId: string; url: string }) {
  const { importIntoFace } = await import('../contract/documents.js');
  const { faceId, ...fields } = opts;
  const body: ImportRequest = requestBody(fields);
  const spinner = ctx.out.spinner(`Importing ${opts.url}`);
  const document = await send(ctx, importIntoFace, { params: { face_id: faceId }, body }).finally(() => spinner.stop());
  const id = document.document_id;
  const written = `the document was imported all the same: ${id} (\`facectl docs get ${id}\`); importing again makes another`;
  ctx.out.record(document, DOCUMENT_FIELDS, written);
  ctx.out.success(`Imported ${opts.url} into ${faceId} as ${document.document_id}`);
  notePreview(ctx, document);
  return document;
}

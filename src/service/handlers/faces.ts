import { faceAllowed, requireModelAllowed, resolveFace } from '../auth.js';
import { conflict, forbidden, HttpError } from '../errors.js';
import { newId } from '../ids.js';
import type { FaceRecord } from '../records.js';
import type { FetchedDocument, Handler, PreparedHandler } from '../service-core.js';
import { countTokens } from '../tokens.js';
import { faceView } from '../views.js';
import { insertDocument } from './documents.js';

/** POST /v1/faces: alias unique per user (409), inside the key's allow-lists (403). */
export const createFace: Handler<'createFace'> = ({ body, auth, svc }) => {
  if (!faceAllowed(auth, body.alias, undefined)) {
    throw forbidden('face_not_allowed', `this key may not create face ${body.alias} (not in its allowed_face_ids)`);
  }
  requireModelAllowed(auth, body.default_model);
  if (svc.store.faceByAlias(auth.user.id, body.alias)) {
    throw conflict('alias_taken', `a face with alias ${body.alias} already exists`);
  }
  const face: FaceRecord = {
    id: newId('face'),
    user_id: auth.user.id,
    alias: body.alias,
    name: body.name,
    basic_facts: body.basic_facts ?? {},
    default_tools: body.default_tools ?? null,
    default_model: body.default_model ?? null,
    formula: body.formula ?? null,
    created: Math.floor(svc.clock.now().getTime() / 1000),
  };
  svc.store.put('faces', face);
  return { status: 201, body: faceView(face) };
};

export const getFace: Handler<'getFace'> = ({ params, auth, svc }) => ({
  status: 200,
  body: faceView(resolveFace(svc.store, auth, params.face_id)),
});

/**
 * The URL as its document's label, within the label rule (at most 500 characters, src/contract/documents.ts):
 * cut, never inside a surrogate pair (the request's text has none alone). `source` keeps the whole URL.
 */
function urlLabel(url: string): string {
  const label = url.slice(0, 500);
  return label.isWellFormed() ? label : label.slice(0, -1);
}

/** POST /v1/faces/{face_id}/import: the URL's text (fetched through url-fetch) as a new document of the face. */
export const importIntoFace: PreparedHandler<'importIntoFace'> = {
  // The face first: nothing is fetched for a face that is not there or not allowed.
  prepare: async ({ params, body, auth, svc }) => {
    resolveFace(svc.store, auth, params.face_id);
    let fetched: FetchedDocument;
    try {
      fetched = await svc.fetchUrl(body.url, { allowPrivate: svc.allowPrivateUrls, signal: svc.signal });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const message = error instanceof Error ? error.message : String(error);
      if (code === 'url_not_allowed' || code === 'fetch_failed') throw new HttpError(422, code, message);
      svc.log(`import of a URL failed unexpectedly: ${message}`);
      throw new HttpError(422, 'fetch_failed', 'the URL could not be fetched');
    }
    // As a submitted document's content must not be empty, neither may an imported one.
    if (fetched.text === '') throw new HttpError(422, 'fetch_failed', `${body.url} gave an empty document`);
    return { fetched, tokenCount: await countTokens(fetched.text, svc.stopping) };
  },
  run: ({ params, body, auth, svc, prepared }) => {
    const face = resolveFace(svc.store, auth, params.face_id);
    const doc = insertDocument(svc, auth, face, {
      label: urlLabel(body.url),
      source: body.url,
      type: body.type,
      perspective: body.perspective,
      face_speaker: body.face_speaker ?? null,
      content: (prepared.fetched as FetchedDocument).text,
      token_count: prepared.tokenCount as number,
    });
    return { status: 201, body: doc };
  },
};

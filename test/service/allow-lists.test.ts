import { beforeAll, describe, expect, test } from 'vitest';
import { call, createDocument, createFace, expectContract, expectError } from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';

/** A key's allow-lists: allowed_face_ids (uid or alias) and allowed_llm_models (local-service.md, "API keys"). */

const fetched: string[] = [];
const svc = useService({
  fetchUrl: async (url) => {
    fetched.push(url);
    return { text: 'fetched', finalUrl: url, contentType: 'text/plain' };
  },
});
let key: string;
beforeAll(() => {
  key = svc.key('pro');
});

describe('allow-lists', () => {
  let limited: string;
  let modelKey: string;
  beforeAll(async () => {
    await createFace(svc, key, 'allowed-face', { default_model: 'model-a' });
    await createFace(svc, key, 'other-face', { default_model: 'model-b' });
    const allowed = await call(svc, 'createApiKey', { key, body: { allowed_face_ids: ['allowed-face', 'new-face'] } });
    limited = expectContract('createApiKey', allowed, 201).key;
    const models = await call(svc, 'createApiKey', { key, body: { allowed_llm_models: ['model-a'] } });
    modelKey = expectContract('createApiKey', models, 201).key;
  });

  test('allowed_face_ids: every request naming another face is 403 face_not_allowed', async () => {
    const other = (await call(svc, 'getFace', { key, params: { face_id: 'other-face' } })).body;
    const otherDoc = await createDocument(svc, key, 'other-face', 'secret notes');
    const otherThread = (await call(svc, 'createThread', { key, body: { alias: 'other-face', label: 't' } })).body;
    const refusals = [
      ['getFace', await call(svc, 'getFace', { key: limited, params: { face_id: 'other-face' } })],
      ['getFace', await call(svc, 'getFace', { key: limited, params: { face_id: other.uid } })],
      ['createFace', await call(svc, 'createFace', { key: limited, body: { name: 'N', alias: 'unlisted-face' } })],
      [
        'createDocument',
        await call(svc, 'createDocument', { key: limited, body: { alias: 'other-face', content: 'x', label: 'y' } }),
      ],
      ['createThread', await call(svc, 'createThread', { key: limited, body: { alias: 'other-face', label: 'y' } })],
      [
        'importIntoFace',
        await call(svc, 'importIntoFace', {
          key: limited,
          params: { face_id: 'other-face' },
          body: { url: 'https://x.test/' },
        }),
      ],
      ['getDocument', await call(svc, 'getDocument', { key: limited, params: { document_id: otherDoc.document_id } })],
      [
        'syncDocument',
        await call(svc, 'syncDocument', { key: limited, params: { document_id: otherDoc.document_id } }),
      ],
      ['getThread', await call(svc, 'getThread', { key: limited, params: { thread_id: otherThread.thread_id } })],
      ['syncThread', await call(svc, 'syncThread', { key: limited, params: { thread_id: otherThread.thread_id } })],
      // A face that does not exist is refused the same way: a restricted key cannot probe for faces.
      ['getFace', await call(svc, 'getFace', { key: limited, params: { face_id: 'no-such-face' } })],
    ] as const;
    for (const [name, res] of refusals) expectError(name, res, 403, 'face_not_allowed');
    expect(fetched).toEqual([]);
    expectContract('getFace', await call(svc, 'getFace', { key: limited, params: { face_id: 'allowed-face' } }), 200);
    await createFace(svc, limited, 'new-face');
    const uid = (await call(svc, 'getFace', { key, params: { face_id: 'allowed-face' } })).body.uid;
    const byUid = await call(svc, 'createApiKey', { key, body: { allowed_face_ids: [uid] } });
    const uidKey = expectContract('createApiKey', byUid, 201).key;
    expectContract(
      'createDocument',
      await call(svc, 'createDocument', { key: uidKey, body: { alias: 'allowed-face', content: 'x', label: 'y' } }),
      201,
    );
  });

  test('allowed_llm_models: a face with another default model cannot be created, synced or interviewed', async () => {
    const res = await call(svc, 'createFace', {
      key: modelKey,
      body: { name: 'B', alias: 'model-b-face', default_model: 'model-b' },
    });
    expectError('createFace', res, 403, 'model_not_allowed');
    await createFace(svc, modelKey, 'model-a-face', { default_model: 'model-a' });
    const otherDoc = await createDocument(svc, modelKey, 'other-face', 'words');
    expectError(
      'syncDocument',
      await call(svc, 'syncDocument', { key: modelKey, params: { document_id: otherDoc.document_id } }),
      403,
      'model_not_allowed',
    );
    expectError(
      'createThread',
      await call(svc, 'createThread', { key: modelKey, body: { alias: 'other-face', label: 'x' } }),
      403,
      'model_not_allowed',
    );
    const thread = (await call(svc, 'createThread', { key, body: { alias: 'other-face', label: 'x' } })).body;
    expectError(
      'syncThread',
      await call(svc, 'syncThread', { key: modelKey, params: { thread_id: thread.thread_id } }),
      403,
      'model_not_allowed',
    );
    const okDoc = await createDocument(svc, modelKey, 'allowed-face', 'words');
    expectContract(
      'syncDocument',
      await call(svc, 'syncDocument', { key: modelKey, params: { document_id: okDoc.document_id } }),
      200,
    );
  });
});

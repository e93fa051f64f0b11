import { ownItem, requireModelAllowed, resolveFace } from '../auth.js';
import { checkOverrideAvailable, markChanged, syncItem } from '../billing.js';
import { conflict } from '../errors.js';
import { newId } from '../ids.js';
import type { ThreadRecord } from '../records.js';
import { countTokens } from '../tokens.js';
import { threadView } from '../views.js';
import type { Handler, PreparedHandler } from '../service-core.js';

/** POST /v1/compile/threads: an empty thread; an interviewer_billing_source that can never apply is a 409. */
export const createThread: Handler<'createThread'> = ({ body, auth, svc }) => {
  const face = resolveFace(svc.store, auth, body.alias);
  requireModelAllowed(auth, face.default_model);
  const override = body.interviewer_billing_source ?? null;
  if (override) checkOverrideAvailable(svc, auth.user, override);
  const now = svc.clock.now().toISOString();
  const thread: ThreadRecord = {
    id: newId('thr'),
    user_id: auth.user.id,
    face_id: face.id,
    alias: face.alias,
    label: body.label,
    source: 'submit',
    created_at: now,
    updated_at: now,
    token_count: 0,
    synced: false,
    sync_started_ms: null,
    synced_token_count: null,
    billing_source: null,
    messages: [],
    messages_archived: 0,
    override,
  };
  svc.store.put('threads', thread);
  return { status: 201, body: threadView(svc, thread, auth.user) };
};

export const getThread: Handler<'getThread'> = ({ params, auth, svc }) => {
  const { item: thread } = ownItem(svc.store, auth, 'threads', params.thread_id);
  return { status: 200, body: threadView(svc, thread, auth.user) };
};

/** PATCH /v1/compile/threads/{id}/messages: replaces them all (the old counted in messages_archived); to sync again. */
export const replaceThreadMessages: PreparedHandler<'replaceThreadMessages'> = {
  prepare: async ({ params, body, auth, svc }) => {
    const { item: before } = ownItem(svc.store, auth, 'threads', params.thread_id);
    // Counted together, as one text of their length is: in a worker when large.
    const contents = body.messages.map((m) => m.content);
    return { tokenCount: await countTokens(contents, svc.stopping), seen: stamp(before) };
  },
  run: ({ params, body, auth, svc, prepared }) => {
    const { item: thread } = ownItem(svc.store, auth, 'threads', params.thread_id);
    // A request that came later and was counted sooner was answered first: this one does not undo it.
    if (stamp(thread) !== prepared.seen) {
      throw conflict(
        'thread_changed',
        'the thread was changed by another request while this one was being counted; nothing was replaced',
      );
    }
    thread.messages_archived += thread.messages.length;
    thread.messages = body.messages.map((m) => ({ role: m.role, content: m.content, from: m.from }));
    thread.token_count = prepared.tokenCount as number;
    markChanged(thread, svc.clock.now());
    svc.store.put('threads', thread);
    return { status: 200, body: threadView(svc, thread, auth.user) };
  },
};

/** What a replacement changes: a thread stamped alike before and after a count was not changed meanwhile. */
const stamp = (thread: { updated_at: string; messages_archived: number; messages: unknown[] }) =>
  `${thread.updated_at} ${thread.messages_archived} ${thread.messages.length}`;

export const syncThread: Handler<'syncThread'> = ({ params, auth, svc }) => {
  const { item: thread, face } = ownItem(svc.store, auth, 'threads', params.thread_id);
  syncItem(svc, auth, 'threads', thread, face, thread.override);
  return { status: 200, body: threadView(svc, thread, auth.user) };
};

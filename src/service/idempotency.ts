import { HttpError } from './errors.js';
import type { ServiceClock } from './service-core.js';
import type { DocRef, DocumentRecord } from './records.js';
import type { Store } from './store.js';

/**
 * Idempotency-Key on POST: per authenticated key, the first successful (2xx) response is kept for 24
 * hours with a digest of the request; a repeat with the same request gets the same status and body
 * (header `Idempotent-Replayed: true`) and nothing is created or charged again; the same
 * Idempotency-Key with another request is a 422 `idempotency_mismatch`. Error answers are not kept:
 * they changed nothing, so a retry simply runs again.
 *
 * A key-creation response holds the new secret, which must never be written to disk. Its record is
 * persisted without a body and the body is kept in memory only: a retry replays it until the service
 * restarts; after a restart the retry gets 409 `idempotency_replay_unavailable` (the key exists, its
 * secret cannot be shown again), never a second key.
 */

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const HEADER_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface StoredResponse {
  status: number;
  body: string;
}

/** What the request handler hands to run(): the response, and for a document, its content cut out. */
export interface ExecutedResponse extends StoredResponse {
  holdsSecret: boolean;
  docRef?: DocRef;
}

const CONTENT_SLOT = '"content":null';

/**
 * Serializes a response body once; when it shows a document (document_id, version and a string
 * content), also returns the text around the content and the content's own JSON (which the journal
 * line of the same request reuses, see Store.noteJson). JSON.stringify with content set to null puts
 * `"content":null` where the content goes (the same key order); that sequence cannot occur earlier,
 * since quotes inside string values are escaped. prefix + JSON.stringify(content) + suffix is exactly
 * JSON.stringify(body).
 */
export function serializeBody(
  body: unknown,
  withRef: boolean,
): { text: string; docRef?: DocRef; content?: { value: string; json: string } } {
  const doc = body as { document_id?: unknown; version?: unknown; content?: unknown } | null;
  if (
    !withRef ||
    doc === null ||
    typeof doc !== 'object' ||
    typeof doc.document_id !== 'string' ||
    typeof doc.version !== 'number' ||
    typeof doc.content !== 'string'
  ) {
    return { text: JSON.stringify(body) };
  }
  const outline = JSON.stringify({ ...doc, content: null });
  const at = outline.indexOf(CONTENT_SLOT);
  if (at < 0) return { text: JSON.stringify(body) };
  const prefix = outline.slice(0, at + CONTENT_SLOT.length - 4);
  const suffix = outline.slice(at + CONTENT_SLOT.length);
  const json = JSON.stringify(doc.content);
  return {
    text: prefix + json + suffix,
    docRef: { document_id: doc.document_id, version: doc.version, prefix, suffix },
    content: { value: doc.content, json },
  };
}

export class Idempotency {
  private readonly secretBodies = new Map<string, string>();
  private readonly inflight = new Map<string, Promise<void>>();
  /** document id -> ids of the records that refer to its content (built from the store, kept up to date). */
  private readonly refs = new Map<string, Set<string>>();
  private readonly store: Store;
  private readonly clock: ServiceClock;

  constructor(store: Store, clock: ServiceClock) {
    this.store = store;
    this.clock = clock;
    for (const record of store.values('idempotency'))
      if (record.doc_ref) this.addRef(record.doc_ref.document_id, record.id);
  }

  static recordId(keyId: string, header: string): string {
    if (!HEADER_PATTERN.test(header)) {
      throw new HttpError(
        400,
        'invalid_idempotency_key',
        'Idempotency-Key must be 1 to 255 printable ASCII characters',
      );
    }
    return `${keyId}:${header}`;
  }

  /**
   * Runs `execute` once per (key, Idempotency-Key): a concurrent repeat waits for the first to finish,
   * then replays it. Returns the response to send and whether it is a replay.
   */
  async run(
    id: string,
    requestHash: string,
    execute: () => Promise<ExecutedResponse>,
  ): Promise<StoredResponse & { replayed: boolean }> {
    for (let running = this.inflight.get(id); running; running = this.inflight.get(id)) await running;
    const prior = this.lookup(id, requestHash);
    if (prior) return { ...prior, replayed: true };
    let finish = () => {};
    this.inflight.set(
      id,
      new Promise<void>((resolve) => {
        finish = resolve;
      }),
    );
    try {
      const result = await execute();
      if (result.status >= 200 && result.status < 300) {
        const ref = result.holdsSecret ? undefined : result.docRef;
        this.store.put('idempotency', {
          id,
          request_hash: requestHash,
          status: result.status,
          body: result.holdsSecret || ref ? null : result.body,
          ...(ref ? { doc_ref: ref } : {}),
          created_ms: this.clock.now().getTime(),
        });
        if (ref) this.addRef(ref.document_id, id);
        if (result.holdsSecret) this.secretBodies.set(id, result.body);
      }
      return { status: result.status, body: result.body, replayed: false };
    } finally {
      this.inflight.delete(id);
      finish();
    }
  }

  /** Drops records older than 24 hours (at start, so the state file does not keep them forever). */
  purgeExpired(): void {
    const now = this.clock.now().getTime();
    for (const record of this.store.values('idempotency')) {
      if (record.created_ms + IDEMPOTENCY_TTL_MS <= now) this.forget(record.id);
    }
  }

  private lookup(id: string, requestHash: string): StoredResponse | null {
    const record = this.store.get('idempotency', id);
    if (!record) return null;
    if (record.created_ms + IDEMPOTENCY_TTL_MS <= this.clock.now().getTime()) {
      this.forget(id);
      return null;
    }
    if (record.request_hash !== requestHash) {
      throw new HttpError(
        422,
        'idempotency_mismatch',
        'this Idempotency-Key was used with a different request; use a new key for a new request',
      );
    }
    const body = record.body ?? this.fromRef(record.doc_ref) ?? this.secretBodies.get(id);
    if (body === undefined) {
      throw new HttpError(
        409,
        'idempotency_replay_unavailable',
        'this request already created an API key, whose secret is shown only once and is no longer held; create a new key',
      );
    }
    return { status: record.status, body };
  }

  /**
   * Called before a document's content or version changes: the records that show it get their full
   * body back (journaled with the edit), so their replays stay byte for byte the first response.
   */
  beforeDocumentEdit(doc: DocumentRecord): void {
    const ids = this.refs.get(doc.id);
    if (!ids) return;
    this.refs.delete(doc.id);
    for (const id of ids) {
      const record = this.store.get('idempotency', id);
      const body = this.fromRef(record?.doc_ref);
      if (!record || body === undefined) continue;
      const { doc_ref: _ref, ...rest } = record;
      this.store.put('idempotency', { ...rest, body });
    }
  }

  private fromRef(ref: DocRef | undefined): string | undefined {
    if (!ref) return undefined;
    const doc = this.store.get('documents', ref.document_id);
    if (!doc || doc.version !== ref.version) return undefined;
    return ref.prefix + JSON.stringify(doc.content) + ref.suffix;
  }

  private addRef(documentId: string, id: string): void {
    let ids = this.refs.get(documentId);
    if (!ids) this.refs.set(documentId, (ids = new Set()));
    ids.add(id);
  }

  private forget(id: string): void {
    const ref = this.store.get('idempotency', id)?.doc_ref;
    if (ref) this.refs.get(ref.document_id)?.delete(id);
    this.store.del('idempotency', id);
    this.secretBodies.delete(id);
  }
}

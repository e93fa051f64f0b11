import { createHash, hash } from 'node:crypto';
import { type AuthInfo, faceAllowed } from './auth.js';
import { forbidden, HttpError } from './errors.js';
import type { DocumentRecord } from './records.js';
import type { Store } from './store.js';
import { readAs, rowsInsert } from './store-rows.js';

// Idempotency-Key on POST: the rules are docs/local-service-choices.md's (Idempotency).

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 60_000;
const HEADER_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** A request under an Idempotency-Key: whose it is, and the digest of what it asks. */
export type IdempotentRequest = { userId: string; key: string; hash: string };

const CONTENT_SLOT = '"content":null';

/**
 * An answer's body, serialized once: whole, or for a document in parts (the text before the content, the
 * content's JSON, the rest) with its id and version. With content null, `"content":null` stands where the
 * content goes, and cannot occur earlier (quotes are escaped). `faceAlias`: the face it shows, if any.
 */
export function serializeBody(body: unknown) {
  const shown = body as { document_id?: unknown; version?: unknown; content?: unknown; alias?: unknown } | null;
  const faceAlias = typeof shown?.alias === 'string' ? shown.alias : undefined;
  if (
    typeof shown?.document_id !== 'string' ||
    typeof shown.version !== 'number' ||
    typeof shown.content !== 'string'
  ) {
    return { body: JSON.stringify(body), faceAlias };
  }
  // The answer's own object (the handler's, no one else's) with its content out for a moment: a copy
  // without it would cost as much as the serialization.
  const content = shown.content;
  shown.content = null;
  let outline: string;
  try {
    outline = JSON.stringify(shown);
  } finally {
    shown.content = content;
  }
  const at = outline.indexOf(CONTENT_SLOT);
  const prefix = outline.slice(0, at + CONTENT_SLOT.length - 4);
  const suffix = outline.slice(at + CONTENT_SLOT.length);
  return {
    parts: [prefix, JSON.stringify(content), suffix],
    doc: { id: shown.document_id, version: shown.version, prefix, suffix },
    faceAlias,
  };
}

interface RecordRow {
  request_sha256: string;
  key_id: string;
  status: number;
  body: string | null;
  document_id: string | null;
  document_version: number | null;
  body_prefix: string | null;
  body_suffix: string | null;
  face_alias: string | null;
  created_ms: number;
}

const RECORD_COLUMNS =
  'request_sha256, key_id, status, body, document_id, document_version, body_prefix, body_suffix, face_alias, created_ms';

const pendingKey = (request: IdempotentRequest) => `idempotency\u0000${request.userId}\u0000${request.key}`;

const SELECT_RECORD = `SELECT ${RECORD_COLUMNS} FROM idempotency WHERE user_id = ? AND idempotency_key = ?`;
const INSERT_RECORD = rowsInsert(
  `INSERT OR REPLACE INTO idempotency (user_id, idempotency_key, ${RECORD_COLUMNS})`,
  12,
);

/**
 * A Bloom filter of the table's (user, Idempotency-Key) pairs (docs/decisions.md): 8 Mi bits, 3 per pair, under 3%
 * false positives at a million records. A purged or rolled back record leaves its bits set.
 */
const FILTER_BITS = 1 << 23;

export class Idempotency {
  /** Bodies holding a key secret, by pendingKey(): the body and when it was kept. */
  private readonly secretBodies = new Map<string, { body: string; ms: number }>();
  private nextPurgeMs = 0;
  private readonly filter = new Uint8Array(FILTER_BITS / 8);

  constructor(
    private readonly store: Store,
    private readonly clock: { now(): Date },
  ) {
    const pairs = store.statement('SELECT user_id, idempotency_key FROM idempotency', true).iterate();
    for (const [userId, key] of pairs as Iterable<[string, string]>) this.filtered(userId, key, true);
  }

  /** Sets the pair's bits (`add`), or tells whether they are all set. */
  private filtered(userId: string, key: string, add: boolean): boolean {
    // FNV-1a over the UTF-16 units of `<user>\0<key>`.
    let h = 0x811c9dc5;
    for (let i = 0; i < userId.length; i++) h = Math.imul(h ^ userId.charCodeAt(i), 0x01000193);
    h = Math.imul(h, 0x01000193);
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    h >>>= 0;
    const step = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) | 1;
    for (let i = 0; i < 3; i++) {
      const bit = (h + Math.imul(i, step)) & (FILTER_BITS - 1);
      const byte = this.filter[bit >>> 3] as number;
      const mask = 1 << (bit & 7);
      if (add) this.filter[bit >>> 3] = byte | mask;
      else if ((byte & mask) === 0) return false;
    }
    return true;
  }

  static request(auth: AuthInfo, header: string, method: string, path: string, raw: Buffer): IdempotentRequest {
    if (!HEADER_PATTERN.test(header)) {
      throw new HttpError(
        400,
        'invalid_idempotency_key',
        'Idempotency-Key must be 1 to 255 printable ASCII characters',
      );
    }
    const head = `${method} ${path}\n`;
    // One call for a small body (a hasher object costs more than hashing 2 KB); a large one is not
    // copied to be hashed in one piece. The same digest either way.
    const digest =
      raw.length < 64 * 1024
        ? hash('sha256', Buffer.concat([Buffer.from(head), raw]), 'hex')
        : createHash('sha256').update(head).update(raw).digest('hex');
    return { userId: auth.user.id, key: header, hash: digest };
  }

  /** The first answer to this request, to send again; null when there is none (or it expired). */
  replay(auth: AuthInfo, request: IdempotentRequest): { status: number; body: string } | null {
    // A record kept earlier in this batch is not written yet (keep()): pending, with a document answer's parts.
    const pending = this.store.pending(pendingKey(request)) as { row: RecordRow; parts?: string[] } | undefined;
    let row: RecordRow;
    if (pending) row = pending.row;
    else if (!this.filtered(request.userId, request.key, false)) return null;
    else {
      const values = this.store.statement(SELECT_RECORD, true).get(request.userId, request.key) as
        unknown[] | undefined;
      if (!values) return null;
      row = Object.fromEntries(RECORD_COLUMNS.split(', ').map((name, i) => [name, values[i]])) as unknown as RecordRow;
    }
    if (row.created_ms + IDEMPOTENCY_TTL_MS <= this.clock.now().getTime()) return null;
    if (row.request_sha256 !== request.hash) {
      throw new HttpError(
        422,
        'idempotency_mismatch',
        'this Idempotency-Key was used with a different request; use a new key for a new request',
      );
    }
    const sameKey = row.key_id === auth.key.id;
    if (!sameKey && row.face_alias !== null) {
      const face = this.store.faceByAlias(auth.user.id, row.face_alias);
      if (!faceAllowed(auth, row.face_alias, face)) {
        throw forbidden(
          'face_not_allowed',
          `this key may not use face ${row.face_alias} (not in its allowed_face_ids), which that request is about`,
        );
      }
    }
    const secret = this.secretBodies.get(pendingKey(request));
    const body = row.body ?? pending?.parts?.join('') ?? this.withContent(row) ?? (sameKey ? secret?.body : undefined);
    if (body === undefined) {
      throw new HttpError(
        409,
        'idempotency_replay_unavailable',
        'this request already created an API key, whose secret is shown only once, to the key that asked, ' +
          'and is no longer held for this one; create a new key',
      );
    }
    return { status: row.status, body };
  }

  /**
   * Keeps a 2xx answer, in the request's transaction. Written at the commit (Store.defer) unless it
   * shows a document older than this batch: an edit of that document later in the batch must find it
   * to give it its whole body (beforeDocumentEdit reads the table).
   */
  keep(
    auth: AuthInfo,
    request: IdempotentRequest,
    response: ReturnType<typeof serializeBody> & { status: number; holdsSecret: boolean },
  ): void {
    const now = this.clock.now().getTime();
    this.purgeExpired();
    this.filtered(request.userId, request.key, true);
    const doc = response.holdsSecret ? undefined : response.doc;
    const row: RecordRow = {
      request_sha256: request.hash,
      key_id: auth.key.id,
      status: response.status,
      body: response.holdsSecret || doc ? null : (response.body ?? null),
      document_id: doc?.id ?? null,
      document_version: doc?.version ?? null,
      body_prefix: doc?.prefix ?? null,
      body_suffix: doc?.suffix ?? null,
      face_alias: response.faceAlias ?? null,
      created_ms: now,
    };
    // `row` is built in RECORD_COLUMNS' order.
    const values = [request.userId, request.key, ...Object.values(row)];
    if (doc && this.store.pending(`documents\u0000${doc.id}`) === undefined) this.store.run(INSERT_RECORD, values);
    else this.store.defer(INSERT_RECORD, values, pendingKey(request), { row, parts: doc ? response.parts : undefined });
    if (response.holdsSecret && response.body !== undefined) {
      this.secretBodies.set(pendingKey(request), { body: response.body, ms: now });
    }
  }

  /** Drops expired records, at most once a minute: a scan, as an index on their time would cost every write. */
  purgeExpired(): void {
    const now = this.clock.now().getTime();
    if (now < this.nextPurgeMs && now >= this.nextPurgeMs - PURGE_EVERY_MS) return;
    this.nextPurgeMs = now + PURGE_EVERY_MS;
    const before = now - IDEMPOTENCY_TTL_MS;
    this.store.statement('DELETE FROM idempotency WHERE created_ms <= ?').run(before);
    for (const [id, kept] of this.secretBodies) if (kept.ms <= before) this.secretBodies.delete(id);
  }

  /** Before a document changes: the records that show it get their whole body back (replays stay the same). */
  beforeDocumentEdit(doc: DocumentRecord): void {
    const sql = 'SELECT user_id, idempotency_key, body_prefix, body_suffix FROM idempotency WHERE document_id = ?';
    const rows = this.store.statement(sql, true).all(doc.id) as [string, string, string, string][];
    if (rows.length === 0) return;
    const content = JSON.stringify(doc.content);
    for (const [userId, key, prefix, suffix] of rows) {
      this.store.run(
        'UPDATE idempotency SET body = ?1, document_id = NULL, document_version = NULL, body_prefix = NULL, ' +
          'body_suffix = NULL WHERE user_id = ?2 AND idempotency_key = ?3',
        [prefix + content + suffix, userId, key],
      );
    }
  }

  /** The body of a record that keeps its document's content out, while that document is at its version. */
  private withContent(row: RecordRow): string | undefined {
    if (row.document_id === null) return undefined;
    const sql = `SELECT ${readAs('content')} FROM documents WHERE id = ? AND version = ?`;
    const found = this.store.statement(sql, true).get(row.document_id, row.document_version) as [Buffer] | undefined;
    return (
      found && (row.body_prefix as string) + JSON.stringify(found[0].toString('utf8')) + (row.body_suffix as string)
    );
  }
}

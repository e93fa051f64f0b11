import { HttpError } from './errors.js';
import type { ServiceClock } from './service-core.js';
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

export class Idempotency {
  private readonly secretBodies = new Map<string, string>();
  private readonly inflight = new Map<string, Promise<void>>();
  private readonly store: Store;
  private readonly clock: ServiceClock;

  constructor(store: Store, clock: ServiceClock) {
    this.store = store;
    this.clock = clock;
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
    execute: () => Promise<StoredResponse & { holdsSecret: boolean }>,
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
        this.store.put('idempotency', {
          id,
          request_hash: requestHash,
          status: result.status,
          body: result.holdsSecret ? null : result.body,
          created_ms: this.clock.now().getTime(),
        });
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
    const body = record.body ?? this.secretBodies.get(id);
    if (body === undefined) {
      throw new HttpError(
        409,
        'idempotency_replay_unavailable',
        'this request already created an API key, whose secret is shown only once and is no longer held; create a new key',
      );
    }
    return { status: record.status, body };
  }

  private forget(id: string): void {
    this.store.del('idempotency', id);
    this.secretBodies.delete(id);
  }
}

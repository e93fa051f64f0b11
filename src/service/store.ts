import { DataFile, type JournalOp, type SnapshotCollections } from './persistence.js';
import { COLLECTION_NAMES, type CollectionName, type Collections, type FaceRecord } from './records.js';

type Maps = { [C in CollectionName]: Map<string, Collections[C]> };

/** What a change replaced: the record before it (undefined: there was none). */
interface Undo {
  collection: CollectionName;
  id: string;
  previous: { id: string } | undefined;
}

/** A failed compaction is tried again after this long (the journal keeps every change meanwhile). */
const COMPACTION_RETRY_MS = 60_000;

/**
 * The service's state: one map per collection, kept in memory. Handlers change records through put()
 * and del(); the server calls commit() once per request, before answering, which appends that
 * request's changes to the journal when a data file is in use.
 */
export class Store {
  readonly maps: Maps;
  private readonly aliasIndex = new Map<string, string>();
  private pending = new Map<string, JournalOp>();
  /** Committed requests' ops not yet written: one line each, written together at the next flush. */
  private batch: JournalOp[][] = [];
  private flushing: Promise<void> | null = null;
  /** Texts already serialized (a document's content, for its response) -> their JSON, until the next flush. */
  private jsonTexts = new Map<string, string>();
  private abandoned = false;
  private readonly dataFile: DataFile | null;
  private compactionRetryAt = 0;
  /** Where the store reports a problem it survives (a failed compaction). */
  onWarning: (line: string) => void = () => {};

  private constructor(dataFile: DataFile | null) {
    this.dataFile = dataFile;
    this.maps = Object.fromEntries(COLLECTION_NAMES.map((name) => [name, new Map()])) as unknown as Maps;
  }

  /** An empty store in memory, or the state of `path` (snapshot + journal) when given. */
  static open(path?: string): Store {
    if (!path) return new Store(null);
    const dataFile = new DataFile(path);
    const store = new Store(dataFile);
    try {
      const { collections, ops } = dataFile.load();
      for (const name of COLLECTION_NAMES) {
        for (const record of collections[name] ?? []) store.apply(['put', name, record]);
      }
      for (const op of ops) store.apply(op);
    } catch (error) {
      dataFile.close();
      throw error;
    }
    return store;
  }

  get persistent(): boolean {
    return this.dataFile !== null;
  }

  get<C extends CollectionName>(collection: C, id: string): Collections[C] | undefined {
    return this.maps[collection].get(id);
  }

  values<C extends CollectionName>(collection: C): IterableIterator<Collections[C]> {
    return this.maps[collection].values();
  }

  /**
   * A view of this store for one request: the same store, except that the changes made through it are
   * remembered, so that `rollback()` can undo them when the request's answer cannot be produced. (A
   * view rather than async context tracking, which would slow every promise of the service.)
   */
  scoped(): { store: Store; rollback: () => void } {
    const undo: Undo[] = [];
    const remember = (collection: CollectionName, id: string) =>
      undo.push({ collection, id, previous: this.maps[collection].get(id) });
    const put: Store['put'] = (collection, record) => {
      remember(collection, record.id);
      this.put(collection, record);
    };
    const del: Store['del'] = (collection, id) => {
      remember(collection, id);
      this.del(collection, id);
    };
    const store = new Proxy(this, {
      get(target, name) {
        if (name === 'put') return put;
        if (name === 'del') return del;
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    /**
     * Undoes the changes made through the view, newest first: a record it created is deleted, one it
     * replaced or deleted is put back. A record changed in place (the same object) has no earlier copy
     * to go back to and stays as it is. The undoing is journaled like any change.
     */
    const rollback = () => {
      for (const { collection, id, previous } of undo.splice(0).reverse()) {
        if (previous === undefined) this.del(collection, id);
        else this.put(collection, previous as Collections[typeof collection]);
      }
    };
    return { store, rollback };
  }

  /** Inserts or replaces a record; recorded for the next commit. */
  put<C extends CollectionName>(collection: C, record: Collections[C]): void {
    const op: JournalOp = ['put', collection, record];
    this.apply(op);
    // Without a data file there is no journal to write: nothing to keep for commit().
    if (this.dataFile) this.pending.set(`${collection}\u0000${record.id}`, op);
  }

  del(collection: CollectionName, id: string): void {
    const op: JournalOp = ['del', collection, id];
    this.apply(op);
    if (this.dataFile) this.pending.set(`${collection}\u0000${id}`, op);
  }

  /**
   * Tells the store the JSON of a text a response just serialized: the journal line of the same
   * request then reuses it instead of serializing the text again (a document's content is most of
   * the line). Kept only until the next flush, and only when there is a journal.
   */
  noteJson(text: string, json: string): void {
    if (!this.dataFile) return;
    if (this.jsonTexts.size >= 10_000) this.jsonTexts.clear();
    this.jsonTexts.set(text, json);
  }

  faceByAlias(userId: string, alias: string): FaceRecord | undefined {
    const id = this.aliasIndex.get(`${userId}\u0000${alias}`);
    return id === undefined ? undefined : this.maps.faces.get(id);
  }

  /**
   * Makes the changes since the last commit durable (one journal line per request). Called by the
   * server before it answers a request; the answer waits for the returned promise (undefined: nothing
   * to wait for). The lines of every request committed in the same event-loop turn are written with
   * one write call (setImmediate runs after the turn's I/O callbacks), which under load replaces one
   * syscall per request by one per turn; each request is still answered only after its line is written.
   */
  commit(now: Date): Promise<void> | undefined {
    // A request that changed nothing still waits for a flush under way: it may have read those changes.
    if (this.pending.size === 0) return this.flushing ?? undefined;
    const ops = [...this.pending.values()];
    this.pending = new Map();
    if (!this.dataFile) return undefined;
    this.batch.push(ops);
    this.flushing ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        try {
          this.flush(now);
          resolve();
        } catch (error) {
          reject(error);
        }
      });
    });
    return this.flushing;
  }

  private flush(now: Date): void {
    const batch = this.batch;
    this.batch = [];
    this.flushing = null;
    const texts = this.jsonTexts;
    this.jsonTexts = new Map();
    if (batch.length === 0 || !this.dataFile) return;
    if (this.abandoned) throw new Error('the service stopped before this change was saved');
    this.dataFile.append(batch, texts);
    // The lines are written: these requests are saved whatever happens to the compaction.
    if (this.dataFile.wantsCompaction() && performance.now() >= this.compactionRetryAt) {
      try {
        this.compact(now);
      } catch (error) {
        this.compactionRetryAt = performance.now() + COMPACTION_RETRY_MS;
        this.onWarning(
          `could not compact ${this.dataFile.path} (${(error as Error).message}); every change is in the journal, next try in ${COMPACTION_RETRY_MS / 1000} s`,
        );
      }
    }
  }

  /** Writes a full snapshot and empties the journal. */
  compact(now: Date): void {
    this.dataFile?.compact(this.toJSON(), now);
    // The snapshot holds every change, so lines still waiting for their flush are not needed: their
    // requests are answered when the (now empty) flush runs. Only once it is written: a snapshot that
    // failed leaves them to the journal.
    this.pending = new Map();
    this.batch = [];
  }

  /** Saves a final snapshot and releases the data file. */
  close(now: Date): void {
    if (!this.dataFile) return;
    try {
      this.compact(now);
    } catch (error) {
      // Everything answered is in the journal already; the next start replays it.
      this.onWarning(
        `could not write the final snapshot of ${this.dataFile.path} (${(error as Error).message}); every change is in the journal`,
      );
    } finally {
      this.dataFile.close();
    }
  }

  /** Releases the data file without saving anything more (what a crash leaves behind). */
  abandon(): void {
    this.abandoned = true;
    this.dataFile?.close();
  }

  toJSON(): SnapshotCollections {
    return Object.fromEntries(COLLECTION_NAMES.map((name) => [name, [...this.maps[name].values()]]));
  }

  private apply(op: JournalOp): void {
    const [kind, collection] = op;
    const map = this.maps[collection] as Map<string, { id: string }>;
    if (kind === 'put') {
      const record = op[2];
      map.set(record.id, record);
      if (collection === 'faces') {
        const face = record as FaceRecord;
        this.aliasIndex.set(`${face.user_id}\u0000${face.alias}`, face.id);
      }
    } else {
      const id = op[2];
      const old = map.get(id);
      map.delete(id);
      if (collection === 'faces' && old) {
        const face = old as FaceRecord;
        this.aliasIndex.delete(`${face.user_id}\u0000${face.alias}`);
      }
    }
  }
}

import { existsSync, renameSync, statSync } from 'node:fs';
import type Database from 'libsql';
import { type Connection, closeConnection, connect, rescueIfReplaced } from './database.js';
import { importStateFile } from './import-state.js';
import { COLLECTION_NAMES, type CollectionName, type Collections } from './records.js';
import { deferredCalls, describeTable, large, recordOf, rowOf, type Table } from './store-rows.js';

/** Rows by what was asked (null: no row), valid under `stamp` (of `collections`). */
type RowCache = { collections: readonly CollectionName[]; stamp: number; rows: Map<string, unknown[] | null> };

/** The requests of one turn of the event loop, committed together (Store.request). */
interface Batch {
  committed: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
  /** Rolled back by SQLite under it (a failed write): its commit is not tried. */
  failed: boolean;
  deferred: Deferred[];
  pending: Map<string, unknown>;
}

type Deferred = { sql: string; values: unknown[] };

interface Running {
  batch: Batch;
  /** Its savepoint is open: it has written (or is about to). */
  savepoint: boolean;
  deferred: Deferred[];
  /** Its keys in the batch's `pending`. */
  keys: string[];
}

export const AUTH_COLLECTIONS = ['keys', 'users'] as const;
/** Rows kept per cache (keys of the clients at work, their faces): past it, the cache starts again. */
const CACHED_ROWS = 1000;

/**
 * The service's state: one SQLite table per collection (schema.ts). Every get reads afresh, so a handler
 * may change its copy freely: only put(), insertNew(), defer() and del() change the state.
 */
export class Store {
  /** False without --data: the database is SQLite's temporary one, gone at close. */
  readonly persistent: boolean;
  private readonly statements = new Map<string, Database.Statement>();
  /** Writes so far, per collection (rolled back or not): see stamp(). */
  private readonly writes = new Map<CollectionName, number>();
  private readonly tables = new Map<CollectionName, Table>();

  /** The --data file as opened (database.ts: a file put in its place while serve runs is not ours). */
  private readonly file?: { path: string; ino: number; dev: number };
  /** Set by close() when the --data file was replaced or removed meanwhile: where the state went instead. */
  rescued?: string;

  constructor(
    private readonly db: Connection,
    path?: string,
  ) {
    this.persistent = path !== undefined;
    if (path !== undefined) this.file = { path, ...statSync(path) };
    for (const name of COLLECTION_NAMES) {
      const info = db.prepare<unknown[]>(`PRAGMA table_info(${name})`).raw().all() as [number, string][];
      const columns = info.map((column) => column[1]);
      this.tables.set(name, describeTable(name, columns));
    }
  }

  /** The database `path` (created if missing; an old JSON state file imported first), else a temporary one. */
  static open(path?: string): Store {
    if (path === undefined) return new Store(connect() as Connection);
    const journal = `${path}.journal`;
    // An old state of journal lines alone (its snapshot gone): imported like a whole one.
    const journalOnly = existsSync(journal) && (!existsSync(path) || statSync(path).size === 0);
    let db = journalOnly ? null : connect(path);
    if (db === null) {
      importStateFile(path, (temp) => new Store(temp));
      db = connect(path);
      if (db === null) throw new Error(`${path} is not a database after its import`);
    } else if (existsSync(journal) && existsSync(`${path}.imported`)) {
      // An import stopped after the database took the file's place: the journal goes beside the snapshot.
      renameSync(journal, `${journal}.imported`);
    }
    return new Store(db, path);
  }

  /** Prepared once; `rows`: it returns rows (as arrays). One that writes opens a running request's savepoint. */
  statement(sql: string, rows = false): Database.Statement {
    if (!rows && this.running !== null && !this.running.savepoint) {
      this.running.savepoint = true;
      this.control('SAVEPOINT request').run();
    }
    return this.control(sql, rows);
  }

  /** statement() without the savepoint: for the statements that begin and end transactions. */
  private control(sql: string, rows = false): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      if (rows) statement.raw();
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `change` in one transaction: for the service's start and an import; requests use request(). */
  transaction<T>(change: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = change();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      // A failed write may have ended the transaction already (SQLite rolls back on some errors).
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.forgetReads();
      throw error;
    }
  }

  /**
   * A request's changes: a savepoint opened at its first write, rolled back (with its deferred writes) when
   * `change` throws. The requests of one event-loop turn, read-only ones too, share one commit (docs/decisions.md).
   * A savepoint that succeeded is not released: the next nests in it, and a rollback goes to the newest of the name.
   */
  request<T>(change: () => T): Promise<T> {
    const batch = (this.batch ??= this.openBatch());
    const running: Running = { batch, savepoint: false, deferred: [], keys: [] };
    this.running = running;
    try {
      const result = change();
      batch.deferred.push(...running.deferred);
      return batch.committed.then(() => result);
    } catch (error) {
      for (const key of running.keys) batch.pending.delete(key);
      if (!this.db.inTransaction) {
        // A failed write may have rolled back the whole transaction: the requests before it go with it.
        this.failBatch(batch, error);
      } else if (running.savepoint) {
        this.control('ROLLBACK TO request').run();
        this.control('RELEASE request').run();
      }
      this.forgetReads();
      throw error;
    } finally {
      this.running = null;
    }
  }

  private batch: Batch | null = null;
  private running: Running | null = null;

  /**
   * Runs a writing statement just before the batch's COMMIT (at once outside a request), for a row no other request
   * can name before then (docs/decisions.md). Dropped if its request fails; until the commit pending(`key`) is `value`.
   */
  defer(sql: string, values: unknown[], key: string, value: unknown): void {
    const running = this.running;
    if (running === null) return this.run(sql, values);
    running.deferred.push({ sql, values });
    running.batch.pending.set(key, value);
    running.keys.push(key);
  }

  /** What a deferred write of this batch will store under `key` (see defer()). */
  pending(key: string): unknown {
    return this.running?.batch.pending.get(key);
  }

  private openBatch(): Batch {
    this.control('BEGIN IMMEDIATE').run();
    const batch = { failed: false, deferred: [], pending: new Map() } as unknown as Batch;
    batch.committed = new Promise<void>((resolve, reject) => {
      batch.resolve = resolve;
      batch.reject = reject;
    });
    // Awaited by the requests that joined, never unhandled.
    batch.committed.catch(() => {});
    setImmediate(() => {
      if (batch.failed) return;
      this.batch = null;
      try {
        // In one go, after the requests: SQLite's code and pages are warm, and no savepoint is needed.
        for (const [sql, values] of deferredCalls(batch.deferred)) this.run(sql, values);
        this.control('COMMIT').run();
        batch.resolve();
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        this.forgetReads();
        batch.reject(error);
      } finally {
        batch.deferred = [];
        batch.pending.clear();
      }
    });
    return batch;
  }

  private failBatch(batch: Batch, error: unknown): void {
    batch.failed = true;
    batch.deferred = [];
    batch.pending.clear();
    if (this.batch === batch) this.batch = null;
    batch.reject(error);
  }

  get<C extends CollectionName>(collection: C, id: string): Collections[C] | undefined {
    const sql = `SELECT ${this.tableOf(collection).select} FROM ${collection} WHERE id = ?`;
    const row = this.statement(sql, true).get(id) as unknown[] | undefined;
    return row && this.record(collection, row);
  }

  *values<C extends CollectionName>(collection: C): IterableIterator<Collections[C]> {
    const sql = `SELECT ${this.tableOf(collection).select} FROM ${collection}`;
    for (const row of this.statement(sql, true).all() as unknown[][]) yield this.record(collection, row);
  }

  count(collection: CollectionName): number {
    return (this.statement(`SELECT count(*) FROM ${collection}`, true).get() as number[])[0] as number;
  }

  /**
   * An API key with its user: every request reads them, so their row is kept until a key or a user is
   * written (or a rollback). Each call builds new records from it: a handler may change its copy.
   */
  keyWithUser(keyId: string) {
    const sql = 'SELECT keys.*, users.* FROM keys JOIN users ON users.id = keys.user_id WHERE keys.id = ?';
    const row = this.cachedRow(this.authRows, keyId, sql, [keyId]);
    if (!row) return undefined;
    const split = this.tableOf('keys').columns.length;
    return { key: this.record('keys', row, 0), user: this.record('users', row, split) };
  }

  /** The user's face named by its uid or, failing that, its alias (one query; kept like keyWithUser's). */
  faceOf(userId: string, name: string) {
    const sql = `SELECT ${this.tableOf('faces').select} FROM faces WHERE user_id = ?1 AND (id = ?2 OR alias = ?2) ORDER BY id = ?2 DESC LIMIT 1`;
    const row = this.cachedRow(this.faceRows, `${userId}\u0000${name}`, sql, [userId, name]);
    return row && this.record('faces', row);
  }

  faceByAlias(userId: string, alias: string) {
    const sql = `SELECT ${this.tableOf('faces').select} FROM faces WHERE user_id = ? AND alias = ?`;
    const row = this.statement(sql, true).get(userId, alias) as unknown[] | undefined;
    return row && this.record('faces', row);
  }

  private authRows: RowCache = { collections: AUTH_COLLECTIONS, stamp: -1, rows: new Map() };
  private faceRows: RowCache = { collections: ['faces'], stamp: -1, rows: new Map() };

  /** A row of `sql`: the one read before when none of the cache's collections was written since, else read again. */
  private cachedRow(cache: RowCache, id: string, sql: string, values: unknown[]): unknown[] | undefined {
    const stamp = this.stamp(cache.collections);
    if (cache.stamp !== stamp || cache.rows.size >= CACHED_ROWS) {
      cache.stamp = stamp;
      cache.rows.clear();
    }
    let row = cache.rows.get(id);
    if (row === undefined) {
      row = (this.statement(sql, true).get(values) as unknown[] | undefined) ?? null;
      cache.rows.set(id, row);
    }
    return row ?? undefined;
  }

  /** After a rollback: what was read since the last commit may be a change now undone (no stamp is -1). */
  private forgetReads(): void {
    this.authRows.stamp = this.faceRows.stamp = -1;
  }

  /** Changes whenever a record of `collections` is written: what was read under the same stamp still holds. */
  stamp(collections: readonly CollectionName[]): number {
    return collections.reduce((sum, name) => sum + (this.writes.get(name) ?? 0), 0);
  }

  put<C extends CollectionName>(collection: C, record: Collections[C]): void {
    this.writes.set(collection, (this.writes.get(collection) ?? 0) + 1);
    const table = this.tableOf(collection);
    this.run(table.upsert, rowOf(table, record));
  }

  /** put() deferred, for a record under a fresh random id; until the commit pending(`<collection>\0<id>`) is true. */
  insertNew<C extends CollectionName>(collection: C, record: Collections[C]): void {
    this.writes.set(collection, (this.writes.get(collection) ?? 0) + 1);
    const table = this.tableOf(collection);
    this.defer(table.upsert, rowOf(table, record), `${collection}\u0000${record.id}`, true);
  }

  /**
   * A statement keeps the values it last ran with (a 60 MiB content): after a large value it runs again with nulls,
   * with which it must write nothing (rowsInsert()'s form).
   */
  run(sql: string, values: unknown[]): void {
    const statement = this.statement(sql);
    statement.run(values);
    if (large(values)) statement.run(values.map(() => null));
  }

  del(collection: CollectionName, id: string): void {
    this.writes.set(collection, (this.writes.get(collection) ?? 0) + 1);
    this.statement(`DELETE FROM ${collection} WHERE id = ?`).run(id);
  }

  /** For tests: each collection as a read-only map. */
  get maps() {
    const view = <C extends CollectionName>(collection: C) => ({
      size: this.count(collection),
      keys: () => Array.from(this.values(collection), (record) => record.id).values(),
      values: () => this.values(collection),
    });
    const maps = Object.fromEntries(COLLECTION_NAMES.map((name) => [name, view(name)]));
    return maps as { [C in CollectionName]: ReturnType<typeof view<C>> };
  }

  /** Closes the database (its WAL folded into the file) and releases its lock. */
  close(): void {
    if (this.batch) this.failBatch(this.batch, new Error('the service stopped before this change was committed'));
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.statements.clear();
    if (this.file) this.rescued = rescueIfReplaced(this.db, this.file);
    closeConnection(this.db);
  }

  /** What a crash leaves: for SQLite, the same as close (every commit is already in the file). */
  abandon(): void {
    this.close();
  }

  private tableOf(collection: CollectionName): Table {
    return this.tables.get(collection) as Table;
  }

  private record<C extends CollectionName>(collection: C, row: unknown[], from = 0): Collections[C] {
    return recordOf(this.tableOf(collection), row, from) as unknown as Collections[C];
  }
}

import type { CollectionName } from './records.js';
import { FLAG_COLUMNS, JSON_COLUMNS } from './schema.js';

/** The parts of store.ts that are data: its request batches and row caches, and how a record maps to a row. */

/** Rows by what was asked (null: no row), valid under `stamp`. */
export interface RowCache {
  stamp: number;
  rows: Map<string, unknown[] | null>;
}

/** The requests of one turn of the event loop, committed together (Store.request). */
export interface Batch {
  committed: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
  /** Rolled back by SQLite under it (a failed write): its commit is not tried. */
  failed: boolean;
  /** Writes of its requests that succeeded, run just before COMMIT (Store.defer). */
  deferred: Deferred[];
  /** What the deferred writes will store, by key, for the batch's later requests (Store.pending). */
  pending: Map<string, unknown>;
}

/** A writing statement and its values, run at the commit. */
export interface Deferred {
  sql: string;
  values: unknown[];
}

/** The request whose change is running (Store.request). */
export interface Running {
  batch: Batch;
  /** Its savepoint is open: it has written (or is about to). */
  savepoint: boolean;
  deferred: Deferred[];
  /** Its keys in the batch's `pending`. */
  keys: string[];
}

/** What tests read of a collection, as of a Map. */
export interface CollectionView<R> {
  readonly size: number;
  get(id: string): R | undefined;
  keys(): IterableIterator<string>;
  values(): IterableIterator<R>;
}

/** How a column holds its field: as it is, as JSON text, or a flag as 0 or 1. */
export type ColumnKind = 'plain' | 'json' | 'flag';

/** A collection's table: its columns in order, how each holds its field, and the statement of put(). */
export interface Table {
  columns: string[];
  kinds: ColumnKind[];
  upsert: string;
}

export function describeTable(collection: CollectionName, columns: string[]): Table {
  const numbered = columns.map((_, i) => `?${i + 1}`).join(', ');
  const updates = columns
    .slice(1)
    .map((column) => `${column} = excluded.${column}`)
    .join(', ');
  return {
    columns,
    kinds: columns.map((column) => (JSON_COLUMNS.has(column) ? 'json' : FLAG_COLUMNS.has(column) ? 'flag' : 'plain')),
    // With nulls it writes nothing (see run()).
    upsert:
      `INSERT INTO ${collection} (${columns.join(', ')}) SELECT ${numbered} WHERE ?1 IS NOT NULL ` +
      `ON CONFLICT (id) DO UPDATE SET ${updates}`,
  };
}

function toColumn(kind: ColumnKind, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (kind === 'json') return JSON.stringify(value);
  if (kind === 'flag') return value ? 1 : 0;
  return value;
}

function fromColumn(kind: ColumnKind, value: unknown): unknown {
  if (value === null) return null;
  if (kind === 'json') return JSON.parse(value as string);
  if (kind === 'flag') return value === 1;
  return value;
}

/** A record's column values, in the table's order. */
export function rowOf(table: Table, record: object): unknown[] {
  const { columns, kinds } = table;
  const fields = record as Record<string, unknown>;
  const values = new Array<unknown>(columns.length);
  for (let i = 0; i < columns.length; i++) values[i] = toColumn(kinds[i] as ColumnKind, fields[columns[i] as string]);
  return values;
}

/** The record of a row's column values (from `from` on: a joined row holds two). */
export function recordOf(table: Table, row: unknown[], from = 0): Record<string, unknown> {
  const { columns, kinds } = table;
  const record: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) {
    record[columns[i] as string] = fromColumn(kinds[i] as ColumnKind, row[from + i]);
  }
  return record;
}

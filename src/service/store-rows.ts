// store.ts's tables: records as rows, and the statements that write rows.

import type { CollectionName } from './records.js';

type ColumnKind = 'plain' | 'json' | 'flag';

/** The columns that do not hold their field as it is: lists and objects as JSON text, booleans as 0 or 1. */
const KINDS = new Map<string, ColumnKind>([
  ['scopes', 'json'],
  ['allowed_face_ids', 'json'],
  ['allowed_llm_models', 'json'],
  ['basic_facts', 'json'],
  ['default_tools', 'json'],
  ['messages', 'json'],
  ['bootstrap', 'flag'],
  ['synced', 'flag'],
]);

/** A collection's table: its columns in order, how each holds its field, and put()'s statement. */
export interface Table {
  columns: string[];
  kinds: ColumnKind[];
  upsert: string;
  /** The columns as a whole row is read: free text as bytes (see readAs). */
  select: string;
}

/** The columns of text as a client gave it, where a NUL character may stand (JSON columns escape it). */
const FREE_TEXT: ReadonlySet<string> = new Set(['content', 'label', 'name', 'formula', 'face_speaker']);

/** libsql's TEXT ends at a NUL character, so free text is read as bytes and decoded (fromColumn). */
export const readAs = (column: string): string =>
  FREE_TEXT.has(column) ? `CAST(${column} AS BLOB) AS ${column}` : column;

export function describeTable(collection: CollectionName, columns: string[]): Table {
  const updates = columns
    .slice(1)
    .map((column) => `${column} = excluded.${column}`)
    .join(', ');
  return {
    columns,
    kinds: columns.map((column) => KINDS.get(column) ?? 'plain'),
    upsert: rowsInsert(
      `INSERT INTO ${collection} (${columns.join(', ')})`,
      columns.length,
      `ON CONFLICT (id) DO UPDATE SET ${updates}`,
    ),
    select: columns.map(readAs).join(', '),
  };
}

/**
 * An insert of one row of `width` values, in the form manyRows() repeats: `<head> SELECT * FROM
 * (VALUES (?, ...)) WHERE column1 IS NOT NULL <tail>`. With nulls it writes nothing (Store.run).
 */
export const rowsInsert = (head: string, width: number, tail = ''): string =>
  `${head} SELECT * FROM (VALUES (${new Array(width).fill('?').join(', ')})) WHERE column1 IS NOT NULL ${tail}`.trim();

/** Strings at least this long are let go of by the statement that wrote them (Store.run). */
const LARGE_VALUE = 64 * 1024;

export const large = (values: unknown[]): boolean =>
  values.some((value) => typeof value === 'string' && value.length >= LARGE_VALUE);

const ROWS_PER_CALL = 16;

/**
 * The calls that write a batch's deferred rows: up to ROWS_PER_CALL rows of one statement per call (docs/decisions.md);
 * a row holding a large value alone, since the driver copies every value of a call before it writes.
 */
export function* deferredCalls(deferred: { sql: string; values: unknown[] }[]): Generator<[string, unknown[]]> {
  const bySql = new Map<string, unknown[][]>();
  for (const { sql, values } of deferred) {
    const rows = bySql.get(sql);
    if (large(values)) yield [sql, values];
    else if (rows) rows.push(values);
    else bySql.set(sql, [values]);
  }
  for (const [sql, rows] of bySql) {
    for (let i = 0; i < rows.length; i += ROWS_PER_CALL) {
      const some = rows.slice(i, i + ROWS_PER_CALL);
      yield [some.length === 1 ? sql : manyRows(sql, some.length), some.flat()];
    }
  }
}

const made = new Map<string, string[]>();

function manyRows(sql: string, rows: number): string {
  let texts = made.get(sql);
  if (!texts) made.set(sql, (texts = []));
  return (texts[rows] ??= sql.replace(
    /\(VALUES (\([?, ]+\))\)/,
    (_, row: string) => `(VALUES ${new Array(rows).fill(row).join(', ')})`,
  ));
}

function toColumn(kind: ColumnKind, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (kind === 'json') return JSON.stringify(value);
  if (kind === 'flag') return value ? 1 : 0;
  return value;
}

function fromColumn(kind: ColumnKind, value: unknown): unknown {
  if (value === null) return null;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.length).toString('utf8');
  if (kind === 'json') return JSON.parse(value as string);
  if (kind === 'flag') return value === 1;
  return value;
}

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

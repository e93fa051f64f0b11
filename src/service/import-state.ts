import {
  closeSync,
  copyFileSync,
  existsSync,
  linkSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { syncDirectory } from '../config/file-safety.js';
import { closeConnection, type Connection, connect, DataFileInUse, StateFileError } from './database.js';
import { PLANS } from './plans.js';
import { COLLECTION_NAMES, type CollectionName } from './records.js';
/** What the import writes through: a Store (its own type: store.ts imports this module, and circles are refused). */
interface ImportTarget {
  transaction<T>(change: () => T): T;
  statement(sql: string): { run(...params: unknown[]): unknown };
  put(collection: CollectionName, record: never): void;
}

/** Imports, once, an older serve's `--data FILE` (JSON snapshot + FILE.journal): docs/local-service-choices.md. */
export function importStateFile(file: string, storeOf: (db: Connection) => ImportTarget): void {
  const state = readStateFile(file);
  const temp = `${file}.importing`;
  let db: Connection | null;
  try {
    db = connect(temp);
  } catch (error) {
    if (!(error instanceof DataFileInUse)) throw error;
    throw new DataFileInUse(`${file} is in use by another facectl serve (it is importing it)`, { cause: error });
  }
  if (db === null) throw new StateFileError(`${temp} is in the way of the import of ${file}: remove it`);
  let moved = false;
  try {
    // Another serve may have finished this very import since the file was read: its database stands.
    if (isDatabase(file)) return;
    const store = storeOf(db);
    store.transaction(() => {
      for (const name of KNOWN) store.statement(`DELETE FROM ${name}`).run();
      insertRecords(file, store, state);
    });
    // Everything into the file itself (out of its WAL, named after its old name), the lock still held.
    db.exec('PRAGMA journal_mode = DELETE');
    if (existsSync(file)) {
      rmSync(`${file}.imported`, { force: true });
      try {
        linkSync(file, `${file}.imported`);
      } catch {
        // A file system without hard links: a copy (FILE must stay in place until the database replaces it).
        copyFileSync(file, `${file}.imported`);
      }
    }
    renameSync(temp, file);
    moved = true;
    syncDirectory(dirname(file));
  } finally {
    closeConnection(db);
    if (!moved) {
      rmSync(temp, { force: true });
      rmSync(`${temp}-wal`, { force: true });
    }
  }
  if (existsSync(`${file}.journal`)) renameSync(`${file}.journal`, `${file}.journal.imported`);
}

type Records = Map<string, Map<string, Record<string, unknown>>>;

/** The state the two files hold: the snapshot's records with the journal's changes applied. */
function readStateFile(file: string): Records {
  const records: Records = new Map([...KNOWN].map((name) => [name, new Map()]));
  const apply = ([kind, collection, value]: JournalOp) => {
    const map = records.get(collection) as Map<string, Record<string, unknown>>;
    if (kind === 'put') map.set(value.id, value as Record<string, unknown>);
    else map.delete(value);
  };
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (text.length > 0) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      // JSON.parse's message quotes the text: for a file that is no JSON at all (binary), only noise.
      const why = /^\s*[{[]/.test(text) ? (error as Error).message : 'it does not begin as JSON';
      throw new StateFileError(
        `${file} is neither a facectl serve database nor the JSON state file of an older facectl (${why}); it was left untouched`,
      );
    }
    for (const [name, list] of Object.entries(checkSnapshot(file, parsed))) {
      for (const record of list ?? []) apply(['put', name as CollectionName, record]);
    }
  }
  const journal = `${file}.journal`;
  if (existsSync(journal)) {
    const lines = readFileSync(journal, 'utf8').split('\n');
    // The part after the last newline is a write that a crash cut short: it was never acknowledged.
    lines.pop();
    lines.forEach((line, index) => {
      if (line.length === 0) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new StateFileError(`${journal} line ${index + 1} is corrupt; the files were left untouched`);
      }
      for (const op of checkJournalLine(journal, index + 1, parsed)) apply(op);
    });
  }
  return records;
}

function insertRecords(file: string, store: ImportTarget, records: Records): void {
  const fail = (collection: string, id: string, error: unknown) =>
    new StateFileError(
      `${file}: ${collection} record ${id} cannot be imported (${(error as Error).message}); the file was left untouched`,
      { cause: error },
    );
  for (const name of COLLECTION_NAMES) {
    for (const [id, record] of records.get(name) ?? []) {
      try {
        store.put(name, record as never);
      } catch (error) {
        throw fail(name, id, error);
      }
    }
  }
  const keys = records.get('keys') as Map<string, Record<string, unknown>>;
  const documents = records.get('documents') as Map<string, Record<string, unknown>>;
  // The values in the table's column order (schema.ts).
  const insert = store.statement(`INSERT INTO idempotency VALUES (${new Array(12).fill('?').join(', ')})`);
  // Their ids were `<API key id>:<Idempotency-Key>`; records are now the user's (any of their keys replays).
  for (const [id, record] of records.get('idempotency') ?? []) {
    const cut = id.indexOf(':');
    const keyId = id.slice(0, cut);
    const userId = keys.get(keyId)?.user_id;
    if (cut < 0 || typeof userId !== 'string') continue;
    const ref = record.doc_ref as { document_id: string; version: number; prefix: string; suffix: string } | undefined;
    const body = typeof record.body === 'string' ? record.body : null;
    const alias = ref ? documents.get(ref.document_id)?.alias : body === null ? undefined : aliasIn(body);
    try {
      insert.run(
        userId,
        id.slice(cut + 1),
        record.request_hash,
        keyId,
        record.status,
        body,
        ref?.document_id ?? null,
        ref?.version ?? null,
        ref?.prefix ?? null,
        ref?.suffix ?? null,
        typeof alias === 'string' ? alias : null,
        record.created_ms,
      );
    } catch (error) {
      throw fail('idempotency', id, error);
    }
  }
}

/** The face alias an answer shows (faces, documents and threads carry one), if any. */
function aliasIn(body: string): unknown {
  try {
    return (JSON.parse(body) as { alias?: unknown } | null)?.alias;
  } catch {
    return undefined;
  }
}

function isDatabase(file: string): boolean {
  const header = Buffer.alloc(16);
  try {
    const fd = openSync(file, 'r');
    try {
      readSync(fd, header, 0, 16, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
  return header.toString('latin1') === 'SQLite format 3\u0000';
}

// The old files' shape, checked before anything is imported: another is refused, saying what is wrong where.

type StateCollection = CollectionName | 'idempotency';
type JournalOp = ['put', StateCollection, { id: string }] | ['del', StateCollection, string];
type SnapshotCollections = Partial<Record<StateCollection, { id: string }[]>>;

const STATE_VERSION = 1;
const STATE_FORMAT = 'facectl-serve-state';

const KNOWN = new Set<string>([...COLLECTION_NAMES, 'idempotency']);

/** Fields, besides `id`, that the service looks up records by: a record without them cannot be used. */
const REQUIRED_STRINGS: Partial<Record<StateCollection, string[]>> = {
  users: ['plan'],
  keys: ['user_id', 'hash'],
  faces: ['user_id', 'alias'],
  documents: ['user_id', 'face_id'],
  threads: ['user_id', 'face_id'],
};

/** Fields the service reads as lists (a thread's messages, of records): another value fails each request reading it (500). */
const REQUIRED_LISTS: Partial<Record<StateCollection, string[]>> = { keys: ['scopes'], threads: ['messages'] };

const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function recordProblem(collection: StateCollection, record: unknown): string | undefined {
  if (!isObject(record)) return `is ${kindOf(record)}, not a record`;
  if (typeof record.id !== 'string' || record.id.length === 0) return 'has no "id" (a non-empty string)';
  for (const field of REQUIRED_STRINGS[collection] ?? []) {
    if (typeof record[field] !== 'string') return `has no "${field}" (a string)`;
  }
  // A plan the service does not know fails every request of its user (500).
  if (collection === 'users' && !Object.hasOwn(PLANS, record.plan as string)) {
    return `"plan" is ${JSON.stringify(record.plan)}, not one of ${Object.keys(PLANS).join(', ')}`;
  }
  for (const field of REQUIRED_LISTS[collection] ?? []) {
    const list = record[field];
    if (!Array.isArray(list)) return `"${field}" is ${kindOf(list)}, not an array`;
    const bad = field === 'messages' ? list.findIndex((message) => !isObject(message)) : -1;
    if (bad >= 0) return `"${field}"[${bad}] is ${kindOf(list[bad])}, not a record`;
  }
  return undefined;
}

function checkSnapshot(path: string, parsed: unknown): SnapshotCollections {
  const fail = (what: string) =>
    new StateFileError(`${path}: ${what}; the file was left untouched (is it a facectl serve --data file?)`);
  if (!isObject(parsed)) throw fail(`the file holds ${kindOf(parsed)}, not a state object`);
  if (parsed.format !== STATE_FORMAT) {
    const given = parsed.format === undefined ? 'has no "format"' : `"format" is ${JSON.stringify(parsed.format)}`;
    throw fail(`${given}, not "${STATE_FORMAT}"`);
  }
  if (parsed.version === undefined) throw fail('has no "version"');
  if (parsed.version !== STATE_VERSION) {
    throw new StateFileError(
      `${path}: state file version ${JSON.stringify(parsed.version)} is not one this facectl serve reads ` +
        `(version ${STATE_VERSION}); the file was left untouched (a newer facectl may have written it)`,
    );
  }
  const collections = parsed.collections;
  if (!isObject(collections)) throw fail(`"collections" is ${kindOf(collections)}, not an object`);
  for (const [name, records] of Object.entries(collections)) {
    if (!KNOWN.has(name)) throw fail(`"collections" has an unknown collection "${name}"`);
    if (!Array.isArray(records)) throw fail(`collections.${name} is ${kindOf(records)}, not an array`);
    records.forEach((record: unknown, index) => {
      const problem = recordProblem(name as StateCollection, record);
      if (problem) throw fail(`collections.${name}[${index}] ${problem}`);
    });
  }
  return collections as SnapshotCollections;
}

function checkJournalLine(journalPath: string, lineNumber: number, parsed: unknown): JournalOp[] {
  const fail = (what: string) =>
    new StateFileError(`${journalPath} line ${lineNumber} is corrupt: ${what}; the files were left untouched`);
  if (!isObject(parsed) || !Array.isArray(parsed.ops)) throw fail('not {"ops": [...]}');
  parsed.ops.forEach((op: unknown, index) => {
    if (!Array.isArray(op) || op.length !== 3) throw fail(`op ${index} is not [kind, collection, value]`);
    const [kind, name, value] = op as unknown[];
    if (typeof name !== 'string' || !KNOWN.has(name)) throw fail(`op ${index} names an unknown collection`);
    if (kind === 'put') {
      const problem = recordProblem(name as StateCollection, value);
      if (problem) throw fail(`op ${index}: the record ${problem}`);
    } else if (kind === 'del') {
      if (typeof value !== 'string') throw fail(`op ${index}: a delete without an id`);
    } else {
      throw fail(`op ${index} is neither "put" nor "del"`);
    }
  });
  return parsed.ops as JournalOp[];
}

import { COLLECTION_NAMES, type CollectionName } from './records.js';

/**
 * The shape of the old JSON state files, checked before anything of them is imported (import-state.ts):
 * a file of another version or shape is refused with what is wrong and where.
 */

type StateCollection = CollectionName | 'idempotency';
export type JournalOp = ['put', StateCollection, { id: string }] | ['del', StateCollection, string];
type SnapshotCollections = Partial<Record<StateCollection, { id: string }[]>>;

const STATE_VERSION = 1;
const STATE_FORMAT = 'facectl-serve-state';

/** A state file or journal that cannot be loaded; the message names the file and what is wrong. */
export class StateFileError extends Error {
  readonly code = 'EBADSTATE';
}

const KNOWN = new Set<string>([...COLLECTION_NAMES, 'idempotency']);

/** Fields, besides `id`, that the service looks up records by: a record without them cannot be used. */
const REQUIRED_STRINGS: Partial<Record<StateCollection, string[]>> = {
  users: ['plan'],
  keys: ['user_id', 'hash'],
  faces: ['user_id', 'alias'],
  documents: ['user_id', 'face_id'],
  threads: ['user_id', 'face_id'],
};

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
  return undefined;
}

export function checkSnapshot(path: string, parsed: unknown): SnapshotCollections {
  const fail = (what: string) =>
    new StateFileError(`${path}: ${what}; the file was left untouched (is it a facectl serve --data file?)`);
  if (!isObject(parsed)) throw fail(`the file holds ${kindOf(parsed)}, not a state object`);
  if (parsed.format !== STATE_FORMAT) throw fail(`"format" is ${JSON.stringify(parsed.format)}, not "${STATE_FORMAT}"`);
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

export function checkJournalLine(journalPath: string, lineNumber: number, parsed: unknown): JournalOp[] {
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

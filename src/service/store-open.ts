import { existsSync, renameSync, statSync } from 'node:fs';
import { type Connection, connect } from './database.js';
import { type ImportTarget, importStateFile } from './import-state.js';

/** What Store.open makes of the connection it opened (store.ts's constructor; no import of it here). */
type Make<S> = (db: Connection, persistent: boolean) => S;

/** The database `path`, an old JSON state file imported into it first, or without a path a temporary one. */
export function openDatabase<S extends ImportTarget>(path: string | undefined, make: Make<S>): S {
  if (path === undefined) return make(connect() as Connection, false);
  const journal = `${path}.journal`;
  // An old state of journal lines alone (its snapshot gone): imported like a whole one.
  const journalOnly = existsSync(journal) && (!existsSync(path) || statSync(path).size === 0);
  let db = journalOnly ? null : connect(path);
  if (db === null) {
    importStateFile(path, (temp) => make(temp, true));
    db = connect(path);
    if (db === null) throw new Error(`${path} is not a database after its import`);
  } else if (existsSync(journal) && existsSync(`${path}.imported`)) {
    // An import stopped after the database took the file's place: the journal goes beside the snapshot.
    renameSync(journal, `${journal}.imported`);
  }
  return make(db, true);
}

/** Opening the store: `openStore()` gives the default `.spindle/spindle.db` under the working folder. */
import { defaultDbPath } from './paths.ts';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite.ts';
import type { Store } from './store.ts';

/** Opens the SQLite store at `path` (creating its folder and file when absent) and migrates it. */
export async function openStore(path: string = defaultDbPath(), options: SqliteStoreOptions = {}): Promise<Store> {
  return openSqliteStore(path, options);
}

/** Where the database and each run's folder live: `.spindle/spindle.db` and `.spindle/runs/<run id>/`. */
import { dirname, join, resolve } from 'node:path';
import { StoreInputError } from './errors.ts';
import { runIdSchema } from './recordSchemas.ts';

export const DEFAULT_DB_PATH = join('.spindle', 'spindle.db');

/** The default database file, `.spindle/spindle.db` under `cwd`. */
export function defaultDbPath(cwd: string = process.cwd()): string {
  return resolve(cwd, DEFAULT_DB_PATH);
}

/** The folder holding every run's folder: `runs/` beside the database file. */
export function defaultRunsRoot(dbPath: string): string {
  return join(dirname(resolve(dbPath)), 'runs');
}

/** The folder of one run inside `runsRoot`; the id may not climb out of it (`..`, `/`). */
export function runDirIn(runsRoot: string, runId: string): string {
  const parsed = runIdSchema.safeParse(runId);
  if (!parsed.success) {
    throw new StoreInputError(`runId: ${JSON.stringify(runId)} is not a valid run id (${parsed.error.issues[0].message})`);
  }
  return join(runsRoot, parsed.data);
}

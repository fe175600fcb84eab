/**
 * Versioned schema migrations of the SQLite store. The applied versions are rows of
 * `schema_migrations`; pending migrations run in order inside one write transaction, so a crash
 * mid-way leaves the previous version intact. A file with a newer version is refused, never
 * migrated down. Released migrations are frozen: change the schema by appending a new one.
 *
 * The SQL keeps to what PostgreSQL accepts too (types, CHECK, ON CONFLICT), except the rowid alias
 * `seq INTEGER PRIMARY KEY`, which a PostgreSQL schema writes as an identity column.
 */
import type { Database } from 'better-sqlite3';
import { nowIso } from '../core/ids.ts';
import { DatabaseRefusedError } from './errors.ts';

export interface Migration {
  version: number;
  name: string;
  up(db: Database): void;
}

const V1_TABLES = `
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('play', 'eval', 'train', 'proxy')),
  env TEXT NOT NULL,
  env_options TEXT NOT NULL,
  policy TEXT NOT NULL,
  config TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed')),
  created_at TEXT NOT NULL,
  finished_at TEXT,
  summary TEXT
);
CREATE TABLE trajectories (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  run_id TEXT REFERENCES runs (id),
  group_id TEXT,
  env TEXT NOT NULL,
  seed BIGINT NOT NULL,
  sample INTEGER NOT NULL,
  policy TEXT NOT NULL,
  reward DOUBLE PRECISION NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('completed', 'truncated', 'failed')),
  created_at TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX trajectories_by_run ON trajectories (run_id, seq);
CREATE INDEX trajectories_by_group ON trajectories (group_id);
CREATE TABLE trajectory_groups (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  run_id TEXT REFERENCES runs (id),
  env TEXT NOT NULL,
  seed BIGINT NOT NULL,
  trajectory_ids TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX trajectory_groups_by_run ON trajectory_groups (run_id, seq);
CREATE TABLE metrics (
  run_id TEXT NOT NULL REFERENCES runs (id),
  step INTEGER NOT NULL,
  name TEXT NOT NULL,
  value DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (run_id, step, name)
);
CREATE TABLE checkpoints (
  run_id TEXT NOT NULL REFERENCES runs (id),
  step INTEGER NOT NULL,
  path TEXT NOT NULL,
  policy_version INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  metrics TEXT NOT NULL,
  PRIMARY KEY (run_id, step)
);
`;

/** The oldest weights version among a stored trajectory's `policyVersions`; null when unknown. */
export function oldestPolicyVersion(policyVersions: unknown): number | null {
  if (!Array.isArray(policyVersions) || policyVersions.length === 0) return null;
  if (!policyVersions.every((v) => Number.isInteger(v))) return null;
  return Math.min(...(policyVersions as number[]));
}

/** v2: a column for "sampled by weights no older than k", backfilled from the stored JSON. */
function addOldestPolicyVersion(db: Database): void {
  db.exec('ALTER TABLE trajectories ADD COLUMN oldest_policy_version INTEGER');
  db.exec('CREATE INDEX trajectories_by_run_policy ON trajectories (run_id, oldest_policy_version)');
  const page = db.prepare<[number], { seq: number; data: string }>(
    'SELECT seq, data FROM trajectories WHERE seq > ? ORDER BY seq LIMIT 500',
  );
  const update = db.prepare('UPDATE trajectories SET oldest_policy_version = ? WHERE seq = ?');
  let after = 0;
  for (;;) {
    const rows = page.all(after);
    if (rows.length === 0) break;
    for (const row of rows) {
      // A row whose JSON is damaged keeps NULL here; reading it later names it.
      let versions: unknown;
      try {
        versions = (JSON.parse(row.data) as { policyVersions?: unknown }).policyVersions;
      } catch {
        versions = null;
      }
      update.run(oldestPolicyVersion(versions), row.seq);
    }
    after = rows[rows.length - 1].seq;
  }
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'runs, trajectories, groups, metrics, checkpoints', up: (db) => db.exec(V1_TABLES) },
  { version: 2, name: 'trajectories.oldest_policy_version', up: addOldestPolicyVersion },
  // v3: the process running a run (run-owner.ts), JSON; NULL for runs stored before.
  { version: 3, name: 'runs.owner', up: (db) => db.exec('ALTER TABLE runs ADD COLUMN owner TEXT') },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

const CREATE_VERSION_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

/** `version` 0: an empty database. `foreign`: it holds tables but none of ours (another program's file). */
export type SchemaState = { kind: 'spindle'; version: number } | { kind: 'foreign'; tables: string[] };

export function readSchemaState(db: Database): SchemaState {
  const tables = db
    .prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
    .pluck()
    .all();
  if (tables.includes('schema_migrations')) {
    const version = db.prepare<[], number | null>('SELECT MAX(version) FROM schema_migrations').pluck().get();
    return { kind: 'spindle', version: version ?? 0 };
  }
  return tables.length === 0 ? { kind: 'spindle', version: 0 } : { kind: 'foreign', tables };
}

/** Throws the refusal for a state this code must not touch. */
export function refuseUnusable(path: string, state: SchemaState): void {
  if (state.kind === 'foreign') {
    throw new DatabaseRefusedError(
      path,
      'foreign',
      `${path} is a SQLite database of another program (tables: ${state.tables.slice(0, 5).join(', ')}), not a Spindle store. Use another path.`,
    );
  }
  if (state.version > LATEST_SCHEMA_VERSION) {
    throw new DatabaseRefusedError(
      path,
      'newer_schema',
      `${path} has schema version ${state.version}, newer than this Spindle knows (${LATEST_SCHEMA_VERSION}). Upgrade Spindle to open it; it is never migrated down.`,
    );
  }
}

export interface MigrationResult {
  from: number;
  to: number;
}

/** Applies every pending migration in one IMMEDIATE transaction (so two processes never both migrate). */
export function migrate(db: Database, path: string): MigrationResult {
  const before = readSchemaState(db);
  refuseUnusable(path, before);
  if (before.kind === 'spindle' && before.version === LATEST_SCHEMA_VERSION) {
    return { from: before.version, to: before.version };
  }
  const apply = db.transaction((): MigrationResult => {
    // Read again under the write lock: another process may have migrated since.
    const state = readSchemaState(db);
    refuseUnusable(path, state);
    const from = state.kind === 'spindle' ? state.version : 0;
    db.exec(CREATE_VERSION_TABLE);
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of MIGRATIONS) {
      if (migration.version <= from) continue;
      try {
        migration.up(db);
      } catch (error) {
        throw new Error(
          `${path}: migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}. ` +
            `It was rolled back; the database stays at version ${from}.`,
          { cause: error },
        );
      }
      record.run(migration.version, migration.name, nowIso());
    }
    return { from, to: LATEST_SCHEMA_VERSION };
  });
  return apply.immediate();
}

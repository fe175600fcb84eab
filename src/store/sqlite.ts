/**
 * The Store on SQLite (better-sqlite3), the default for one machine.
 *
 * Durability: WAL journal with synchronous=FULL. In WAL mode NORMAL already survives a killed
 * process (a commit is in the OS page cache once it returns), but it may lose the last commits on
 * a power cut or kernel crash; FULL fsyncs the WAL at every commit, so "a crash loses at most the
 * episodes in flight" holds for those too. Writes here are one transaction per episode, group or
 * step, each costing seconds of model time, so the extra fsync (~0.1 ms measured here, a few ms on
 * slow disks) is noise.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { nowIso } from '../core/ids.ts';
import type { CheckpointRecord, Group, MetricPoint, Run, RunOwner, Trajectory } from '../core/trajectory.ts';
import { StoreInputError } from './errors.ts';
import { migrate, oldestPolicyVersion } from './migrations.ts';
import { defaultRunsRoot, runDirIn } from './paths.ts';
import { currentOwner } from './run-owner.ts';
import { canonicalJson, checkInput, toJson } from './records.ts';
import { checkpointSchema, groupSchema, metricPointSchema, runIdSchema, runSchema, trajectorySchema } from './recordSchemas.ts';
import {
  checkpointFromRow,
  groupFromRow,
  metricFromRow,
  runFromRow,
  trajectoryFromRow,
  type CheckpointRow,
  type GroupRow,
  type MetricRow,
  type RunRow,
  type TrajectoryRow,
} from './sqliteRows.ts';
import type { MetricQuery, Page, PageQuery, RunEnd, RunQuery, Store, TrajectoryQuery } from './store.ts';
import { checkDatabaseFile } from './sqliteFile.ts';

export interface SqliteStoreOptions {
  /** Where run folders go; default `runs/` beside the database file. */
  runsRoot?: string;
  /** How long a write waits for another process's write lock before failing (ms, default 10000). */
  busyTimeoutMs?: number;
}

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;

function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new StoreInputError(`limit: must be an integer from 1 to ${MAX_PAGE}, got ${limit}`);
  }
  return limit;
}

/** Cursors are the `seq` of the last item of the previous page. */
function readCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (!/^[0-9]{1,15}$/.test(cursor)) throw new StoreInputError(`cursor: ${JSON.stringify(cursor)} is not a cursor this store returned`);
  return Number(cursor);
}

function pageOf<T>(rows: { seq: number }[], limit: number, read: (i: number) => T): Page<T> {
  const shown = Math.min(rows.length, limit);
  const items = Array.from({ length: shown }, (_, i) => read(i));
  return { items, nextCursor: rows.length > limit ? String(rows[limit - 1].seq) : null };
}

function what(kind: string, index: number, value: unknown): string {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? `${kind}[${index}] (id ${id})` : `${kind}[${index}]`;
}

export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly runsRoot: string;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(db: Database.Database, runsRoot: string) {
    this.db = db;
    this.runsRoot = runsRoot;
  }

  /** A prepared statement, prepared once per SQL text. */
  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  /** Refuses records that name a run the store does not have (the foreign key would, less clearly). */
  private requireRuns(runIds: Iterable<string | null>, what: string): void {
    for (const runId of new Set(runIds)) {
      if (runId !== null && this.sql('SELECT 1 FROM runs WHERE id = ?').get(runId) === undefined) {
        throw new StoreInputError(`a record in ${what} names run ${runId}, which is not in the store; create the run first`);
      }
    }
  }

  async createRun(input: Run): Promise<void> {
    const run = checkInput(runSchema, input, `run (id ${String((input as { id?: unknown })?.id)})`);
    this.db
      .transaction(() => {
        const inserted = this.sql(
          `INSERT INTO runs (id, kind, env, env_options, policy, config, status, created_at, finished_at, summary, owner)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
        ).run(
          run.id,
          run.kind,
          run.env,
          toJson(run.envOptions, 'run.envOptions'),
          run.policy,
          toJson(run.config, 'run.config'),
          run.status,
          run.createdAt,
          run.finishedAt,
          run.summary === null ? null : toJson(run.summary, 'run.summary'),
          canonicalJson(currentOwner()),
        );
        if (inserted.changes === 1) return;
        const stored = runFromRow(this.sql('SELECT * FROM runs WHERE id = ?').get(run.id) as RunRow);
        const identity = (r: Run) => canonicalJson([r.kind, r.env, r.envOptions, r.policy, r.config]);
        if (identity(stored) !== identity(run)) {
          throw new StoreInputError(
            `run ${run.id} already exists with a different kind, env, env options, policy or config; use a new run id`,
          );
        }
      })
      .immediate();
  }

  async finishRun(runId: string, end: RunEnd): Promise<void> {
    checkInput(runIdSchema, runId, 'runId');
    if (end.status !== 'finished' && end.status !== 'failed') {
      throw new StoreInputError(`finishRun: status must be 'finished' or 'failed', got ${JSON.stringify(end.status)}`);
    }
    const summary = end.summary === null ? null : toJson(end.summary, 'finishRun summary');
    const result = this.sql('UPDATE runs SET status = ?, finished_at = ?, summary = ? WHERE id = ?').run(
      end.status,
      end.finishedAt,
      summary,
      runId,
    );
    if (result.changes === 0) throw new StoreInputError(`finishRun: run ${runId} is not in the store`);
  }

  async reopenRun(runId: string): Promise<void> {
    checkInput(runIdSchema, runId, 'runId');
    const result = this.sql("UPDATE runs SET status = 'running', finished_at = NULL, summary = NULL, owner = ? WHERE id = ?").run(
      canonicalJson(currentOwner()),
      runId,
    );
    if (result.changes === 0) throw new StoreInputError(`reopenRun: run ${runId} is not in the store`);
  }

  async abandonRun(runId: string, owner: RunOwner, end: Omit<RunEnd, 'status'>): Promise<boolean> {
    checkInput(runIdSchema, runId, 'runId');
    const result = this.sql(
      "UPDATE runs SET status = 'failed', finished_at = ?, summary = ? WHERE id = ? AND status = 'running' AND owner = ?",
    ).run(end.finishedAt, end.summary === null ? null : toJson(end.summary, 'abandonRun summary'), runId, canonicalJson(owner));
    return result.changes === 1;
  }

  async getRun(runId: string): Promise<Run | null> {
    const row = this.sql('SELECT * FROM runs WHERE id = ?').get(runId) as RunRow | undefined;
    return row ? runFromRow(row) : null;
  }

  async listRuns(query: RunQuery = {}): Promise<Run[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.kind !== undefined) {
      where.push('kind = ?');
      params.push(query.kind);
    }
    if (query.status !== undefined) {
      where.push('status = ?');
      params.push(query.status);
    }
    const filter = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const rows = this.sql(`SELECT * FROM runs ${filter} ORDER BY created_at DESC, id DESC LIMIT ?`).all(
      ...params,
      checkLimit(query.limit),
    ) as RunRow[];
    return rows.map((row) => runFromRow(row));
  }

  async saveTrajectories(inputs: Trajectory[]): Promise<void> {
    const trajectories = inputs.map((t, i) => checkInput(trajectorySchema, t, what('trajectories', i, t)));
    const rows = trajectories.map((t, i) => ({
      t,
      data: toJson(t, what('trajectories', i, t)),
      oldest: oldestPolicyVersion(t.policyVersions),
    }));
    const created = nowIso();
    this.db
      .transaction(() => {
        this.requireRuns(
          trajectories.map((t) => t.runId),
          'trajectories',
        );
        const upsert = this.sql(
          `INSERT INTO trajectories
             (id, run_id, group_id, env, seed, sample, policy, reward, status, oldest_policy_version, created_at, data)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET
             run_id = excluded.run_id, group_id = excluded.group_id, env = excluded.env, seed = excluded.seed,
             sample = excluded.sample, policy = excluded.policy, reward = excluded.reward, status = excluded.status,
             oldest_policy_version = excluded.oldest_policy_version, data = excluded.data`,
        );
        for (const { t, data, oldest } of rows) {
          upsert.run(t.id, t.runId, t.groupId, t.env, t.seed, t.sample, t.policy, t.reward, t.status, oldest, created, data);
        }
      })
      .immediate();
  }

  async getTrajectory(id: string): Promise<Trajectory | null> {
    const row = this.sql('SELECT seq, id, run_id, data FROM trajectories WHERE id = ?').get(id) as TrajectoryRow | undefined;
    return row ? trajectoryFromRow(row) : null;
  }

  async listTrajectories(runId: string, query: TrajectoryQuery = {}): Promise<Page<Trajectory>> {
    const limit = checkLimit(query.limit);
    const where = ['run_id = ?', 'seq > ?'];
    const params: unknown[] = [runId, readCursor(query.cursor)];
    if (query.groupId !== undefined) {
      where.push('group_id = ?');
      params.push(query.groupId);
    }
    if (query.status !== undefined) {
      where.push('status = ?');
      params.push(query.status);
    }
    if (query.minPolicyVersion !== undefined) {
      if (!Number.isInteger(query.minPolicyVersion)) {
        throw new StoreInputError(`minPolicyVersion: must be an integer, got ${query.minPolicyVersion}`);
      }
      where.push('oldest_policy_version >= ?');
      params.push(query.minPolicyVersion);
    }
    const rows = this.sql(
      `SELECT seq, id, run_id, data FROM trajectories WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ?`,
    ).all(...params, limit + 1) as TrajectoryRow[];
    return pageOf(rows, limit, (i) => trajectoryFromRow(rows[i]));
  }

  async saveGroups(inputs: Group[]): Promise<void> {
    const groups = inputs.map((g, i) => checkInput(groupSchema, g, what('groups', i, g)));
    const created = nowIso();
    this.db
      .transaction(() => {
        this.requireRuns(
          groups.map((g) => g.runId),
          'groups',
        );
        const upsert = this.sql(
          `INSERT INTO trajectory_groups (id, run_id, env, seed, trajectory_ids, created_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET
             run_id = excluded.run_id, env = excluded.env, seed = excluded.seed, trajectory_ids = excluded.trajectory_ids`,
        );
        for (const g of groups) upsert.run(g.id, g.runId, g.env, g.seed, JSON.stringify(g.trajectoryIds), created);
      })
      .immediate();
  }

  async getGroup(id: string): Promise<Group | null> {
    const row = this.sql('SELECT * FROM trajectory_groups WHERE id = ?').get(id) as GroupRow | undefined;
    return row ? groupFromRow(row) : null;
  }

  async listGroups(runId: string, query: PageQuery = {}): Promise<Page<Group>> {
    const limit = checkLimit(query.limit);
    const rows = this.sql('SELECT * FROM trajectory_groups WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(
      runId,
      readCursor(query.cursor),
      limit + 1,
    ) as GroupRow[];
    return pageOf(rows, limit, (i) => groupFromRow(rows[i]));
  }

  async appendMetrics(inputs: MetricPoint[]): Promise<void> {
    const points = inputs.map((p, i) => checkInput(metricPointSchema, p, `metrics[${i}]`));
    this.db
      .transaction(() => {
        this.requireRuns(
          points.map((p) => p.runId),
          'metrics',
        );
        const upsert = this.sql(
          `INSERT INTO metrics (run_id, step, name, value) VALUES (?, ?, ?, ?)
           ON CONFLICT (run_id, step, name) DO UPDATE SET value = excluded.value`,
        );
        for (const p of points) upsert.run(p.runId, p.step, p.name, p.value);
      })
      .immediate();
  }

  async getMetrics(runId: string, query: MetricQuery = {}): Promise<MetricPoint[]> {
    const where = ['run_id = ?'];
    const params: unknown[] = [runId];
    if (query.names !== undefined) {
      if (query.names.length === 0) return [];
      where.push(`name IN (${query.names.map(() => '?').join(', ')})`);
      params.push(...query.names);
    }
    if (query.fromStep !== undefined) {
      where.push('step >= ?');
      params.push(query.fromStep);
    }
    const rows = this.sql(
      `SELECT run_id, step, name, value FROM metrics WHERE ${where.join(' AND ')} ORDER BY step, name`,
    ).all(...params) as MetricRow[];
    return rows.map(metricFromRow);
  }

  async saveCheckpoint(input: CheckpointRecord): Promise<void> {
    const record = checkInput(checkpointSchema, input, 'checkpoint');
    const metrics = toJson(record.metrics, 'checkpoint.metrics');
    this.db
      .transaction(() => {
        this.requireRuns([record.runId], 'checkpoint');
        this.sql(
          `INSERT INTO checkpoints (run_id, step, path, policy_version, created_at, metrics) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (run_id, step) DO UPDATE SET
             path = excluded.path, policy_version = excluded.policy_version,
             created_at = excluded.created_at, metrics = excluded.metrics`,
        ).run(record.runId, record.step, record.path, record.policyVersion, record.createdAt, metrics);
      })
      .immediate();
  }

  async listCheckpoints(runId: string): Promise<CheckpointRecord[]> {
    const rows = this.sql('SELECT * FROM checkpoints WHERE run_id = ? ORDER BY step').all(runId) as CheckpointRow[];
    return rows.map(checkpointFromRow);
  }

  runDir(runId: string): string {
    const dir = runDirIn(this.runsRoot, runId);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

/**
 * Opens (creating when absent) a SQLite store at `path`, after checking the file is one it may use
 * and applying pending migrations. Refused files are left byte-for-byte unchanged.
 */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  const file = resolve(path);
  mkdirSync(dirname(file), { recursive: true });
  checkDatabaseFile(file);
  const db = new Database(file, { timeout: options.busyTimeoutMs ?? 10_000 });
  try {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`${file}: SQLite could not switch to WAL mode (got ${String(mode)}); is it on a network filesystem?`);
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db, file);
  } catch (error) {
    db.close();
    throw error;
  }
  return new SqliteStore(db, options.runsRoot ?? defaultRunsRoot(file));
}

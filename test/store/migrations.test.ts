import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from '../../src/store/migrations.ts';
import { openStore } from '../../src/store/open.ts';
import { makeRun, makeTrajectory } from './fixtures/records.ts';
import { tempDir } from './fixtures/tmp.ts';

// The schema of a version-1 file, written out as such a file holds it (frozen, independent of the code).
const V1_FILE_SCHEMA = `
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);
CREATE TABLE runs (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('play', 'eval', 'train', 'proxy')), env TEXT NOT NULL,
  env_options TEXT NOT NULL, policy TEXT NOT NULL, config TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed')),
  created_at TEXT NOT NULL, finished_at TEXT, summary TEXT);
CREATE TABLE trajectories (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, run_id TEXT REFERENCES runs (id), group_id TEXT,
  env TEXT NOT NULL, seed BIGINT NOT NULL, sample INTEGER NOT NULL, policy TEXT NOT NULL,
  reward DOUBLE PRECISION NOT NULL, status TEXT NOT NULL CHECK (status IN ('completed', 'truncated', 'failed')),
  created_at TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX trajectories_by_run ON trajectories (run_id, seq);
CREATE INDEX trajectories_by_group ON trajectories (group_id);
CREATE TABLE trajectory_groups (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, run_id TEXT REFERENCES runs (id), env TEXT NOT NULL,
  seed BIGINT NOT NULL, trajectory_ids TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX trajectory_groups_by_run ON trajectory_groups (run_id, seq);
CREATE TABLE metrics (
  run_id TEXT NOT NULL REFERENCES runs (id), step INTEGER NOT NULL, name TEXT NOT NULL,
  value DOUBLE PRECISION NOT NULL, PRIMARY KEY (run_id, step, name));
CREATE TABLE checkpoints (
  run_id TEXT NOT NULL REFERENCES runs (id), step INTEGER NOT NULL, path TEXT NOT NULL,
  policy_version INTEGER NOT NULL, created_at TEXT NOT NULL, metrics TEXT NOT NULL, PRIMARY KEY (run_id, step));
INSERT INTO schema_migrations VALUES (1, 'runs, trajectories, groups, metrics, checkpoints', '2025-01-01T00:00:00.000Z');
`;

/** A version-1 database holding one run and three trajectories (sampled by weights 3, 4 and 5). */
function writeV1Database(path: string, extraSql = ''): void {
  const db = new Database(path);
  db.exec(V1_FILE_SCHEMA + extraSql);
  const run = makeRun('run_old');
  db.prepare('INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
    run.id, run.kind, run.env, JSON.stringify(run.envOptions), run.policy, JSON.stringify(run.config),
    run.status, run.createdAt, run.finishedAt, null,
  );
  const insert = db.prepare(
    'INSERT INTO trajectories (id, run_id, group_id, env, seed, sample, policy, reward, status, created_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  for (let i = 0; i < 3; i++) {
    const t = makeTrajectory('run_old', i);
    insert.run(t.id, t.runId, t.groupId, t.env, t.seed, t.sample, t.policy, t.reward, t.status, '2025-01-01T00:00:00.000Z', JSON.stringify(t));
  }
  db.close();
}

function appliedVersions(path: string): number[] {
  const db = new Database(path, { readonly: true });
  const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all() as number[];
  db.close();
  return versions;
}

test('migrations are numbered 1, 2, ... without gaps', () => {
  assert.deepEqual(
    MIGRATIONS.map((m) => m.version),
    Array.from({ length: MIGRATIONS.length }, (_, i) => i + 1),
  );
  assert.ok(LATEST_SCHEMA_VERSION >= 2);
});

test('an empty database, and an empty file, migrate to the latest version', async (t) => {
  const dir = tempDir(t);
  for (const path of [join(dir, 'new.db'), join(dir, 'empty.db')]) {
    if (path.endsWith('empty.db')) writeFileSync(path, '');
    const store = await openStore(path);
    await store.createRun(makeRun('run_new'));
    await store.close();
    assert.deepEqual(appliedVersions(path), MIGRATIONS.map((m) => m.version));
    const again = await openStore(path);
    assert.equal((await again.getRun('run_new'))?.id, 'run_new', 'reopening keeps the data');
    await again.close();
    assert.deepEqual(appliedVersions(path), MIGRATIONS.map((m) => m.version), 'reopening applies nothing twice');
  }
});

test('a version-1 database is migrated and its trajectories backfilled', async (t) => {
  const path = join(tempDir(t), 'v1.db');
  writeV1Database(path);
  assert.deepEqual(appliedVersions(path), [1]);

  const store = await openStore(path);
  t.after(() => store.close());
  assert.deepEqual(appliedVersions(path), MIGRATIONS.map((m) => m.version));
  const all = await store.listTrajectories('run_old');
  assert.deepEqual(all.items, [0, 1, 2].map((i) => makeTrajectory('run_old', i)));
  assert.equal((await store.getRun('run_old'))?.owner, null, 'no process was recorded for a run stored before v3');
  // Weights versions 3, 4, 5 were backfilled into the new column: only the freshest two pass a bound of 4.
  const fresh = await store.listTrajectories('run_old', { minPolicyVersion: 4 });
  assert.deepEqual(fresh.items.map((tr) => tr.id), ['traj_run_old_1', 'traj_run_old_2']);
  await store.saveTrajectories([makeTrajectory('run_old', 3)]);
  assert.equal((await store.listTrajectories('run_old', { minPolicyVersion: 3 })).items.length, 4);
});

test('a migration that fails leaves the database at its previous version', async (t) => {
  const path = join(tempDir(t), 'clash.db');
  // A hand-made index in the way of migration 2, which fails after its ALTER TABLE succeeded.
  writeV1Database(path, 'CREATE INDEX trajectories_by_run_policy ON trajectories (run_id);');
  await assert.rejects(openStore(path), /migration 2 \(trajectories.oldest_policy_version\) failed: index trajectories_by_run_policy already exists\. It was rolled back; the database stays at version 1/);
  assert.deepEqual(appliedVersions(path), [1]);
  const db = new Database(path, { readonly: true });
  const columns = db.prepare("SELECT name FROM pragma_table_info('trajectories')").pluck().all();
  db.close();
  assert.ok(!columns.includes('oldest_policy_version'), 'the half-applied ALTER TABLE was rolled back');
});

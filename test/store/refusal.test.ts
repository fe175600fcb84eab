import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Rng } from '../../src/core/random.ts';
import { CorruptRecordError, DatabaseRefusedError, type RefusalReason } from '../../src/store/errors.ts';
import { LATEST_SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { openStore } from '../../src/store/open.ts';
import { makeCheckpoint, makeGroup, makeRun, makeTrajectory } from './fixtures/records.ts';
import { tempDir } from './fixtures/tmp.ts';

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function noise(seed: number, n: number): Buffer {
  const rng = new Rng(seed);
  return Buffer.from(Array.from({ length: n }, () => rng.int(256)));
}

/** A closed store holding a run with two trajectories. */
async function writeStore(path: string): Promise<void> {
  const store = await openStore(path);
  await store.createRun(makeRun('run_r'));
  await store.saveTrajectories([makeTrajectory('run_r', 0), makeTrajectory('run_r', 1)]);
  await store.saveGroups([makeGroup('run_r', 0)]);
  await store.saveCheckpoint(makeCheckpoint('run_r', 5));
  await store.close();
}

/** Opening must fail with `reason`, leave the file's bytes as they were and add no file beside it. */
async function assertRefused(path: string, reason: RefusalReason, message: RegExp): Promise<void> {
  const before = sha256(path);
  const siblings = readdirSync(join(path, '..')).sort();
  await assert.rejects(openStore(path), (error: unknown) => {
    assert.ok(error instanceof DatabaseRefusedError, `expected a DatabaseRefusedError, got ${String(error)}`);
    assert.equal(error.reason, reason);
    assert.match(error.message, message);
    assert.match(error.message, /was left unchanged/);
    return true;
  });
  assert.equal(sha256(path), before, 'the refused file is byte-for-byte unchanged');
  assert.deepEqual(readdirSync(join(path, '..')).sort(), siblings, 'nothing was created beside it');
}

test('a database with a newer schema is refused and not touched', async (t) => {
  const path = join(tempDir(t), 'newer.db');
  await writeStore(path);
  const db = new Database(path);
  db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(LATEST_SCHEMA_VERSION + 1, 'from the future', '2030-01-01');
  db.close();
  await assertRefused(path, 'newer_schema', new RegExp(`schema version ${LATEST_SCHEMA_VERSION + 1}, newer than this Spindle knows \\(${LATEST_SCHEMA_VERSION}\\)`));
});

test('files that are not SQLite databases are refused and left unchanged', async (t) => {
  const dir = tempDir(t);
  const text = join(dir, 'notes.db');
  writeFileSync(text, 'these are my notes, not a database\n'.repeat(50));
  await assertRefused(text, 'not_sqlite', /is not a SQLite database \(it starts with "these are my not"\)/);

  const short = join(dir, 'short.db');
  writeFileSync(short, 'SQLite format 3\u0000');
  await assertRefused(short, 'not_sqlite', /is not a SQLite database/);

  const magicThenNoise = join(dir, 'noise.db');
  writeFileSync(magicThenNoise, Buffer.concat([Buffer.from('SQLite format 3\u0000', 'latin1'), noise(1, 8192 - 16)]));
  await assertRefused(magicThenNoise, 'corrupt', /is a damaged SQLite database/);
});

test('a store whose pages were overwritten is refused as damaged and left unchanged', async (t) => {
  const path = join(tempDir(t), 'damaged.db');
  await writeStore(path);
  const bytes = readFileSync(path);
  // Keep the 100-byte header, overwrite the rest of page 1 (the schema) and everything after it.
  writeFileSync(path, Buffer.concat([bytes.subarray(0, 100), noise(2, bytes.length - 100)]));
  await assertRefused(path, 'corrupt', /damaged SQLite database \(database disk image is malformed\)/);
});

test("another program's SQLite database is refused, not migrated into", async (t) => {
  const path = join(tempDir(t), 'app.db');
  const db = new Database(path);
  db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada')");
  db.close();
  await assertRefused(path, 'foreign', /another program \(tables: users\)/);
});

test('a damaged row is named when read, without a crash deep inside', async (t) => {
  const path = join(tempDir(t), 'rows.db');
  await writeStore(path);
  const raw = new Database(path);
  raw.prepare('UPDATE trajectories SET data = ? WHERE id = ?').run('{"id": "traj_run_r_0", "turns": [', 'traj_run_r_0');
  const second = makeTrajectory('run_r', 1) as unknown as { turns: { calls: { completion: { logprobs: unknown[] } }[] }[] };
  second.turns[1].calls[0].completion.logprobs[2] = 'oops';
  raw.prepare('UPDATE trajectories SET data = ? WHERE id = ?').run(JSON.stringify(second), 'traj_run_r_1');
  raw.prepare('UPDATE trajectory_groups SET trajectory_ids = ? WHERE id = ?').run('[1, 2]', makeGroup('run_r', 0).id);
  raw.pragma('ignore_check_constraints = ON');
  raw.prepare("UPDATE runs SET kind = 'party' WHERE id = 'run_r'").run();
  raw.prepare("UPDATE checkpoints SET metrics = 'nan' WHERE run_id = 'run_r'").run();
  raw.close();

  const store = await openStore(path);
  t.after(() => store.close());
  const damaged = (pattern: RegExp) => (error: unknown) => error instanceof CorruptRecordError && pattern.test(error.message);
  await assert.rejects(store.getTrajectory('traj_run_r_0'), damaged(/row traj_run_r_0 in table trajectories is unreadable: column data is not valid JSON/));
  await assert.rejects(
    store.getTrajectory('traj_run_r_1'),
    damaged(/row traj_run_r_1 in table trajectories is unreadable: turns\.1\.calls\.0\.completion\.logprobs\.2: .*expected number/),
  );
  await assert.rejects(store.listTrajectories('run_r'), damaged(/traj_run_r_0/));
  await assert.rejects(store.getGroup(makeGroup('run_r', 0).id), damaged(/table trajectory_groups is unreadable: trajectoryIds\.0/));
  await assert.rejects(store.getRun('run_r'), damaged(/row run_r in table runs is unreadable: kind/));
  await assert.rejects(store.listCheckpoints('run_r'), damaged(/row run_r\/5 in table checkpoints is unreadable: column metrics is not valid JSON/));
});

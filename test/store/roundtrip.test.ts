import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { StoreInputError } from '../../src/store/errors.ts';
import { openStore } from '../../src/store/open.ts';
import { defaultDbPath } from '../../src/store/paths.ts';
import type { Store } from '../../src/store/store.ts';
import type { Trajectory } from '../../src/core/trajectory.ts';
import { currentOwner } from '../../src/store/run-owner.ts';
import { makeCheckpoint, makeGroup, makeRun, makeTrajectory } from './fixtures/records.ts';
import { tempDir } from './fixtures/tmp.ts';

async function freshStore(t: TestContext): Promise<{ store: Store; path: string }> {
  const path = join(tempDir(t), 'spindle.db');
  const store = await openStore(path);
  t.after(() => store.close());
  return { store, path };
}

async function allTrajectories(store: Store, runId: string, limit: number): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listTrajectories(runId, { limit, cursor });
    assert.ok(page.items.length <= limit);
    out.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}

test('runs round-trip; re-creating is a no-op, a conflicting re-create is refused', async (t) => {
  const { store } = await freshStore(t);
  // The store records the creating process as the run's owner, whatever the input says.
  const input = makeRun('run_a');
  await store.createRun({ ...input, owner: { host: 'elsewhere', pid: 1, bootId: null, startTicks: null } });
  const run = { ...input, owner: currentOwner() };
  assert.deepEqual(await store.getRun('run_a'), run);
  assert.equal(await store.getRun('run_missing'), null);

  await store.createRun({ ...run, createdAt: '2030-01-01T00:00:00.000Z' });
  assert.deepEqual(await store.getRun('run_a'), run, 'a retried create keeps the first record');
  await assert.rejects(store.createRun({ ...run, config: { ...run.config, groupSize: 8 } }), /run run_a already exists with a different/);

  const end = { status: 'finished' as const, finishedAt: '2025-01-02T05:00:00.000Z', summary: { meanReward: -0.05, steps: 50 } };
  await store.finishRun('run_a', end);
  await store.finishRun('run_a', end);
  assert.deepEqual(await store.getRun('run_a'), { ...run, ...end });
  await assert.rejects(store.finishRun('run_nope', end), /run run_nope is not in the store/);
  await assert.rejects(store.finishRun('run_a', { ...end, summary: { meanReward: Number.NaN } }), /"meanReward" is NaN/);
  // A resumed run is running again, without the old end; ending it again writes the new end.
  await store.reopenRun('run_a');
  assert.deepEqual(await store.getRun('run_a'), run);
  await assert.rejects(store.reopenRun('run_nope'), /run run_nope is not in the store/);
  await store.finishRun('run_a', end);

  await store.createRun(makeRun('run_b', { kind: 'eval', createdAt: '2025-02-01T00:00:00.000Z' }));
  await store.createRun(makeRun('run_c', { kind: 'eval', createdAt: '2025-03-01T00:00:00.000Z' }));
  assert.deepEqual((await store.listRuns()).map((r) => r.id), ['run_c', 'run_b', 'run_a']);
  assert.deepEqual((await store.listRuns({ kind: 'eval', limit: 1 })).map((r) => r.id), ['run_c']);
  assert.deepEqual((await store.listRuns({ status: 'finished' })).map((r) => r.id), ['run_a']);
  await assert.rejects(store.createRun(makeRun('../escape')), /run id/);
});

test('trajectories round-trip with every turn, page in save order, and re-saving is idempotent', async (t) => {
  const { store } = await freshStore(t);
  await store.createRun(makeRun('run_t'));
  const trajectories = Array.from({ length: 11 }, (_, i) => makeTrajectory('run_t', i));
  await store.saveTrajectories(trajectories.slice(0, 6));
  await store.saveTrajectories(trajectories.slice(6));

  for (const trajectory of trajectories) assert.deepEqual(await store.getTrajectory(trajectory.id), trajectory);
  const turns = trajectories.reduce((n, tr) => n + tr.turns.length, 0);
  assert.ok(turns >= 33, 'fixtures hold several turns each');
  assert.deepEqual(await allTrajectories(store, 'run_t', 4), trajectories);

  // The same batch again changes nothing, and a rescored trajectory replaces its row in place.
  await store.saveTrajectories(trajectories.slice(0, 6));
  const rescored = { ...trajectories[2], reward: 0.75, rewardParts: { outcome: 1, format: -0.25 } };
  await store.saveTrajectories([rescored]);
  const expected = trajectories.map((tr) => (tr.id === rescored.id ? rescored : tr));
  assert.deepEqual(await allTrajectories(store, 'run_t', 100), expected);

  const group0 = await store.listTrajectories('run_t', { groupId: 'group_run_t_0' });
  assert.deepEqual(group0.items.map((tr) => tr.sample), [0, 1, 2, 3]);
  assert.equal(group0.nextCursor, null);
  // Fixture i is sampled by weights version 3 + i % 3.
  const fresh = await store.listTrajectories('run_t', { minPolicyVersion: 5 });
  assert.deepEqual(fresh.items.map((tr) => tr.id), expected.filter((_, i) => i % 3 === 2).map((tr) => tr.id));
  assert.equal((await store.listTrajectories('run_t', { status: 'failed' })).items.length, 0);
  assert.equal(await store.getTrajectory('traj_missing'), null);
});

test('a batch is saved whole or not at all, and bad input is named', async (t) => {
  const { store, path } = await freshStore(t);
  await store.createRun(makeRun('run_x'));
  const good = makeTrajectory('run_x', 0);
  const nanReward = makeTrajectory('run_x', 1, { reward: Number.NaN });
  await assert.rejects(store.saveTrajectories([good, nanReward]), /trajectories\[1\] \(id traj_run_x_1\) is invalid: reward/);
  const strayRun = makeTrajectory('run_elsewhere', 2);
  await assert.rejects(store.saveTrajectories([good, strayRun]), /trajectories names run run_elsewhere, which is not in the store/);
  assert.equal(await store.getTrajectory(good.id), null, 'nothing of a refused batch was written');

  // A failure inside the transaction, after the first row went in, takes the whole batch back.
  const raw = new Database(path);
  raw.exec(`CREATE TRIGGER refuse_second BEFORE INSERT ON trajectories WHEN NEW.id = 'traj_run_x_6'
            BEGIN SELECT RAISE(ABORT, 'disk said no'); END`);
  raw.close();
  await assert.rejects(store.saveTrajectories([good, makeTrajectory('run_x', 6)]), /disk said no/);
  assert.equal(await store.getTrajectory(good.id), null, 'the first row of the failed batch was rolled back');
  good.turns[0].calls[0].sampling = { temperature: 0.7, maxTokens: 64, topP: 0.9, seed: 5 };
  await store.saveTrajectories([good]);
  assert.deepEqual(await store.getTrajectory(good.id), good);

  const broken = makeTrajectory('run_x', 3);
  (broken.turns[0].calls[0].completion.logprobs as unknown[])[4] = null;
  await assert.rejects(store.saveTrajectories([broken]), /turns\.0\.calls\.0\.completion\.logprobs\.4/);
  const badSampling = makeTrajectory('run_x', 3);
  badSampling.turns[0].calls[0].sampling = { temperature: -1, maxTokens: 16 };
  await assert.rejects(store.saveTrajectories([badSampling]), /turns\.0\.calls\.0\.sampling\.temperature/);
  const badInfo = makeTrajectory('run_x', 4);
  badInfo.turns[0].info = { edge: Number.POSITIVE_INFINITY };
  await assert.rejects(store.saveTrajectories([badInfo]), /"edge" is Infinity/);

  const unattached = makeTrajectory(null, 5);
  await store.saveTrajectories([unattached]);
  assert.deepEqual(await store.getTrajectory(unattached.id), unattached);
  await assert.rejects(store.listTrajectories('run_x', { limit: 0 }), /limit: must be an integer from 1 to 1000/);
  await assert.rejects(store.listTrajectories('run_x', { cursor: 'abc' }), /cursor: "abc" is not a cursor/);
});

test('groups, metrics and checkpoints round-trip and upsert', async (t) => {
  const { store } = await freshStore(t);
  await store.createRun(makeRun('run_g'));
  const groups = Array.from({ length: 5 }, (_, i) => makeGroup('run_g', i));
  await store.saveGroups(groups);
  await store.saveGroups(groups.slice(1, 3));
  assert.deepEqual(await store.getGroup(groups[3].id), groups[3]);
  assert.equal(await store.getGroup('group_missing'), null);
  const first = await store.listGroups('run_g', { limit: 3 });
  assert.equal(first.items.length, 3);
  const rest = await store.listGroups('run_g', { limit: 3, cursor: first.nextCursor ?? undefined });
  assert.deepEqual([...first.items, ...rest.items], groups);
  assert.equal(rest.nextCursor, null);

  const points = [0, 1, 2].flatMap((step) => [
    { runId: 'run_g', step, name: 'reward/mean', value: -0.5 + step * 0.1 },
    { runId: 'run_g', step, name: 'loss', value: 1 / (step + 1) },
  ]);
  await store.appendMetrics(points);
  await store.appendMetrics([{ runId: 'run_g', step: 1, name: 'loss', value: 0.42 }]);
  const stored = await store.getMetrics('run_g');
  assert.equal(stored.length, 6, 'a repeated (run, step, name) is not duplicated');
  assert.deepEqual(stored.find((p) => p.step === 1 && p.name === 'loss')?.value, 0.42);
  assert.deepEqual(
    stored.map((p) => `${p.step}:${p.name}`),
    ['0:loss', '0:reward/mean', '1:loss', '1:reward/mean', '2:loss', '2:reward/mean'],
  );
  assert.deepEqual((await store.getMetrics('run_g', { names: ['loss'], fromStep: 1 })).map((p) => p.value), [0.42, 1 / 3]);
  await assert.rejects(store.appendMetrics([points[0], { ...points[1], value: Number.NaN }]), /metrics\[1\] is invalid: value/);
  await assert.rejects(store.appendMetrics([{ ...points[0], runId: 'run_nope' }]), /run run_nope/);

  const checkpoints = [makeCheckpoint('run_g', 20), makeCheckpoint('run_g', 10)];
  for (const c of checkpoints) await store.saveCheckpoint(c);
  const moved = { ...checkpoints[0], path: 'checkpoints/step-20b' };
  await store.saveCheckpoint(moved);
  assert.deepEqual(await store.listCheckpoints('run_g'), [checkpoints[1], moved]);
});

test('run folders live beside the database; the default path is .spindle/spindle.db', async (t) => {
  const dir = tempDir(t);
  const path = defaultDbPath(dir);
  assert.equal(path, join(dir, '.spindle', 'spindle.db'));
  assert.equal(defaultDbPath(), resolve('.spindle', 'spindle.db'));
  const store = await openStore(path);
  t.after(() => store.close());
  assert.ok(statSync(path).isFile(), 'opening created the folder and the file');
  const runDir = store.runDir('run_f');
  assert.equal(runDir, join(dir, '.spindle', 'runs', 'run_f'));
  assert.ok(existsSync(runDir));
  assert.throws(() => store.runDir('../../etc'), StoreInputError);

  const raw = new Database(path, { readonly: true });
  assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
  raw.close();
});

test('two connections (as two processes would) see each other\'s writes', async (t) => {
  const { store, path } = await freshStore(t);
  const other = await openStore(path);
  t.after(() => other.close());
  await store.createRun(makeRun('run_shared'));
  await other.saveTrajectories([makeTrajectory('run_shared', 0)]);
  await store.saveTrajectories([makeTrajectory('run_shared', 1)]);
  await other.appendMetrics([{ runId: 'run_shared', step: 0, name: 'loss', value: 1 }]);
  assert.deepEqual((await store.listTrajectories('run_shared')).items.map((tr) => tr.sample), [0, 1]);
  assert.equal((await store.getMetrics('run_shared')).length, 1);
  assert.equal((await other.getRun('run_shared'))?.id, 'run_shared');
});

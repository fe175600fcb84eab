/**
 * A run with the critic estimator (advantage.estimator 'critic'): each step is judged by the table
 * of action values learned from the earlier steps' returns, keyed by the env's state, and the
 * table travels in the checkpoint, so a resumed run continues exactly.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { actionValuesFromJson } from '../../src/advantage/critic.ts';
import { initEngine } from '../../src/model/engine.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { loadTrainCheckpoint } from '../../src/train/checkpoint-io.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { trainRun } from '../../src/train/trainer.ts';
import { parseTrainerState } from '../../src/train/trainer-state.ts';
import { learnedWarmStart, metricsAt, newTrainRun, pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

let dir: string;
let store: Store;

before(async () => {
  await initEngine({ threads: 1 });
  dir = tempDir('spindle-critic-');
  store = await openStore(join(dir, 'spindle.db'));
});

after(async () => {
  await store?.close();
});

const settings = parseTrainConfig(
  tinyTrainConfig({
    steps: 4,
    checkpointEvery: 2,
    // A warm start long enough that most answers are legal picks (as trainer-dense.test.ts).
    warmStart: learnedWarmStart,
    batchSeeds: 8,
    advantage: { estimator: 'critic', minVisits: 1 },
  }),
);

test('the critic learns action values by env state, judges later steps by them, and resumes exactly', async () => {
  const runA = await newTrainRun(store);
  const a = await trainRun({ spec: pickSpec, options: {}, settings, store, runId: runA, resume: null });
  await a.policy.close();
  const metrics = await store.getMetrics(runA);
  const at = (step: number, name: string) => metrics.find((m) => m.step === step && m.name === name)?.value;
  // Step 1 is judged by an empty table: every advantage 0.
  assert.deepEqual([at(1, 'advantage/min'), at(1, 'advantage/max')], [0, 0]);
  assert.ok((at(3, 'advantage/max') ?? 0) > 0, 'step 3 is judged by what steps 1 and 2 taught the critic');
  assert.equal(at(1, 'advantage/critic_silent_episodes'), 32, 'no episode of step 1 could be judged');
  assert.ok(at(3, 'advantage/critic_silent_episodes')! < 32);

  // The table after step 2: keyed by the pick env's state, a picked number's value is its mean reward.
  const step2 = loadTrainCheckpoint(join(store.runDir(runA), 'checkpoints/step-000002'), parseTrainerState);
  const table = actionValuesFromJson(step2.state.actionValues, 'step 2');
  assert.ok(table.size > 0 && table.size <= 3);
  let checked = 0;
  for (const [state, actions] of table) {
    const target = (JSON.parse(state) as { target: number }).target;
    for (const [action, v] of actions) {
      const picked = JSON.parse(action) as [string, { n: number }][];
      if (picked.length !== 1 || picked[0][0] !== 'pick') continue;
      assert.equal(v.value, picked[0][1].n === target ? 1 : 0, `${state} ${action}`);
      checked += v.visits;
    }
  }
  assert.ok(checked >= 32, `the legal picks of steps 1-2 (64 episodes, a few refused) are in the table: ${checked}`);

  const other = await openStore(join(dir, 'resumed.db'));
  try {
    const runB = await newTrainRun(other);
    const b = await trainRun({ spec: pickSpec, options: {}, settings, store: other, runId: runB, resume: step2 });
    await b.policy.close();
    const bMetrics = await other.getMetrics(runB);
    for (const step of [3, 4]) assert.deepEqual(metricsAt(bMetrics, step), metricsAt(metrics, step), `step ${step}`);
    const endA = loadTrainCheckpoint(join(store.runDir(runA), 'checkpoints/step-000004'), parseTrainerState);
    const endB = loadTrainCheckpoint(join(other.runDir(runB), 'checkpoints/step-000004'), parseTrainerState);
    assert.deepEqual(endB.state.actionValues, endA.state.actionValues);
  } finally {
    await other.close();
  }
});

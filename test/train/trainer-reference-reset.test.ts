/**
 * The KL's reference reset (train-config.ts loss.referenceResetEvery) on a tiny run (threads 1): every
 * N steps the reference becomes the RL weights of that step, checkpoints keep it beside the model,
 * and a run resumed after a reset continues against the same reference (without the warm-start
 * folder), logging what the uninterrupted run logged.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { loadTrainCheckpoint } from '../../src/train/checkpoint-io.ts';
import { parseTrainConfig, resetsReferenceAfter, type TrainSettings } from '../../src/train/train-config.ts';
import { trainRun, type TrainOutcome } from '../../src/train/trainer.ts';
import { parseTrainerState } from '../../src/train/trainer-state.ts';
import { learnedWarmStart, metricsAt, newTrainRun, pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';
import { trainedPickRun } from './trained-pick-run.ts';

const settings: TrainSettings = parseTrainConfig(
  tinyTrainConfig({
    steps: 4,
    checkpointEvery: 1,
    weightAverage: { from: null },
    warmStart: learnedWarmStart,
    optimizer: { lr: 3e-3, warmupSteps: 0 },
    loss: { klBeta: 1, referenceResetEvery: 2 },
  }),
);

let dir: string;
let store: Store;
let runA: string;
let outcome: TrainOutcome;

before(async () => {
  ({ dir, store, runId: runA, outcome } = await trainedPickRun('spindle-reset-', settings));
  await outcome.policy.close();
});

after(async () => {
  await store?.close();
});

test('reset after every N-th step but the last, and only with a KL term', () => {
  const loss = settings.loss;
  assert.deepEqual([1, 2, 3, 4].map((s) => resetsReferenceAfter(loss, s, 4)), [false, true, false, false]);
  assert.deepEqual([2, 4, 6].map((s) => resetsReferenceAfter(loss, s, 7)), [true, true, true]);
  assert.equal(resetsReferenceAfter({ ...loss, klBeta: 0 }, 2, 4), false);
  assert.equal(resetsReferenceAfter({ ...loss, referenceResetEvery: null }, 2, 4), false);
  assert.throws(() => parseTrainConfig({ loss: { referenceResetEvery: 0 } }), /train\.loss\.referenceResetEvery: must be ≥ 1/);
});

test('the reference becomes step 2 weights: logged per step, kept in the checkpoints', async () => {
  const metrics = await store.getMetrics(runA);
  assert.deepEqual([1, 2, 3, 4].map((s) => metricsAt(metrics, s)['kl/reference_step']), [0, 0, 2, 2]);
  const runDir = store.runDir(runA);
  const ckpt = (step: number) => loadTrainCheckpoint(join(runDir, `checkpoints/step-00000${step}`), parseTrainerState);
  const [c1, c2, c3, c4] = [1, 2, 3, 4].map(ckpt);
  assert.equal(c1.state.reference, null);
  assert.equal(c1.referenceParams, null, 'no reference file before the first reset');
  for (const c of [c2, c3, c4]) assert.deepEqual(c.state.reference, { step: 2 });
  for (const name of Object.keys(c2.params)) {
    // Without averaging a checkpoint's model is RL's weights: the reference is step 2's model.
    assert.deepEqual(c2.referenceParams![name].data, c2.params[name].data, name);
    assert.deepEqual(c4.referenceParams![name].data, c2.params[name].data, name);
  }
  // Right after the reset the policy still equals its reference, so step 3's KL starts from 0 and
  // stays far below step 2's (taken to the warm start after two steps of RL).
  const kl = (s: number) => metricsAt(metrics, s)['kl/reference'];
  assert.ok(metricsAt(metrics, 2)['train/updates'] > 0 && metricsAt(metrics, 3)['train/updates'] > 0, 'steps 2 and 3 trained');
  assert.ok(kl(3) < kl(2), `KL at step 3 (${kl(3)}) below step 2's (${kl(2)})`);
});

test('a run resumed after a reset continues against the same reference', async () => {
  const other = await openStore(join(dir, 'resumed.db'));
  try {
    const checkpoint = loadTrainCheckpoint(join(store.runDir(runA), 'checkpoints/step-000003'), parseTrainerState);
    await assert.rejects(
      trainRun({ spec: pickSpec, options: {}, settings, store: other, runId: await newTrainRun(other), resume: { ...checkpoint, referenceParams: null } }),
      /the checkpoint of step 3 has a reference reset at step 2 but no reference-weights\.safetensors/,
    );
    // The other store has no warm-start folder: the reference can only come from the checkpoint.
    const runB = await newTrainRun(other);
    const resumed = await trainRun({ spec: pickSpec, options: {}, settings, store: other, runId: runB, resume: checkpoint });
    await resumed.policy.close();
    const a = metricsAt(await store.getMetrics(runA), 4);
    const b = metricsAt(await other.getMetrics(runB), 4);
    assert.ok(a['train/updates'] > 0, 'step 4 trained, so the KL term is compared');
    assert.deepEqual(b, a);
  } finally {
    await other.close();
  }
});

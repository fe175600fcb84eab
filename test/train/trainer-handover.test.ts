/**
 * Choosing the handed-over policy on validation seeds (train-config.ts `select`, handover-select.ts):
 * every candidate's validation return is what its weights play greedily on those seeds, the best is
 * handed over and saved as the last checkpoint's model (RL's own weights and the average beside it),
 * and a finished run resumed for another step continues the same average and chooses again.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { tree } from '../../src/model/engine.ts';
import { toParams, type HostParams } from '../../src/model/params.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { AVERAGE_WEIGHTS_FILE, checkpointPath, loadModelFolder, loadRlWeights, loadTrainCheckpoint, RL_WEIGHTS_FILE } from '../../src/train/checkpoint-io.ts';
import { earlierCandidateSteps } from '../../src/train/handover-select.ts';
import { parseTrainConfig, type TrainSettings } from '../../src/train/train-config.ts';
import { trainRun, type TrainEvent, type TrainOutcome } from '../../src/train/trainer.ts';
import { greedySummary } from '../../src/train/trainer-eval.ts';
import { trainerPolicy } from '../../src/train/trainer-policy.ts';
import { validationSeeds } from '../../src/train/trainer-seeds.ts';
import { parseTrainerState, type HandOverWeights } from '../../src/train/trainer-state.ts';
import { learnedWarmStart, metricsAt, newTrainRun, pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';
import { trainedPickRun } from './trained-pick-run.ts';

const EPISODES = 24;
const settings: TrainSettings = parseTrainConfig(
  tinyTrainConfig({
    seed: 5,
    steps: 4,
    checkpointEvery: 1,
    warmStart: learnedWarmStart,
    optimizer: { lr: 2e-2, warmupSteps: 0 },
    weightAverage: { from: 0 },
    select: { episodes: EPISODES, from: 0 },
  }),
);

let dir: string;
let store: Store;
let runA: string;
let outcome: TrainOutcome;

before(async () => {
  ({ dir, store, runId: runA, outcome } = await trainedPickRun('spindle-handover-', settings));
});

after(async () => {
  await outcome?.policy.close();
  await store?.close();
});

/** The greedy mean return of `params` on the validation seeds, played by a fresh policy. */
async function validationReturn(assets: TrainOutcome['assets'], params: HostParams): Promise<number> {
  const p = toParams(params);
  const policy = trainerPolicy(assets, p, { name: 'check', modelId: 'check', version: 0, maxBatchRows: settings.rollout.maxBatchRows });
  tree.dispose(p);
  try {
    const play = { spec: pickSpec, options: {}, policy, maxTurns: outcome.maxTurns, maxTokens: outcome.maxTokens, concurrency: settings.rollout.concurrency };
    return (await greedySummary(play, validationSeeds(EPISODES), 'the check')).meanReturn.mean;
  } finally {
    await policy.close();
  }
}

function assertSameWeights(a: HostParams, b: HostParams, what: string, tolerance = 0): void {
  for (const name of Object.keys(a)) {
    const [x, y] = [a[name].data, b[name].data];
    for (let i = 0; i < x.length; i++) assert.ok(Math.abs(x[i] - y[i]) <= tolerance, `${what}: ${name}[${i}] ${x[i]} vs ${y[i]}`);
  }
}

test('the candidates from a checkpoint step on: checkpointed steps before the last, late to early', () => {
  assert.deepEqual(earlierCandidateSteps(0.6, 100, 10), [90, 80, 70, 60]);
  assert.deepEqual(earlierCandidateSteps(0.6, 100, 50), []);
  assert.deepEqual(earlierCandidateSteps(0, 3, 1), [2, 1]);
  assert.deepEqual(earlierCandidateSteps(0.5, 7, 2), [6, 4]);
});

test('every candidate is judged by its own greedy play on the validation seeds, and the best is handed over', async () => {
  const h = outcome.handOver!;
  assert.deepEqual(h.candidates.map((c) => c.weights), ['average', 4, 3, 2, 1]);
  assert.equal(h.firstSeed, validationSeeds(1)[0]);
  assert.equal(h.episodes, EPISODES);
  // The first of the best (ties go to the average, then the later step).
  const best = Math.max(...h.candidates.map((c) => c.meanReturn));
  assert.equal(h.chosen, h.candidates.find((c) => c.meanReturn === best)!.weights);
  // This seed's run hands over an earlier step's own weights, not the average nor the last step's.
  assert.equal(h.chosen, 1);
  assert.ok(new Set(h.candidates.map((c) => c.meanReturn)).size > 1, 'the candidates differ on the validation seeds');

  const runDir = store.runDir(runA);
  const last = loadTrainCheckpoint(join(runDir, checkpointPath(4)), parseTrainerState);
  const own = (step: number) => loadRlWeights(join(runDir, checkpointPath(step)), outcome.assets.cfg);
  // The average beside the model is the mean of RL's own weights after steps 1-4.
  const average = last.averageParams!;
  const mean: HostParams = {};
  for (const name of Object.keys(average)) {
    const steps = [1, 2, 3, 4].map((step) => own(step)[name].data);
    mean[name] = { shape: average[name].shape, data: steps[0].map((_, i) => steps.reduce((sum, d) => sum + d[i], 0) / 4) };
  }
  assertSameWeights(average, mean, 'the average', 1e-6);
  const weightsOf = (w: HandOverWeights) => (w === 'average' ? average : own(w));
  for (const c of h.candidates) assert.equal(await validationReturn(outcome.assets, weightsOf(c.weights)), c.meanReturn, `candidate ${c.weights}`);

  // The checkpoint's model is the chosen weights; RL's own and the average sit beside it.
  assertSameWeights(last.params, own(1), 'the model is step 1');
  assert.ok(existsSync(join(runDir, checkpointPath(4), RL_WEIGHTS_FILE)) && existsSync(join(runDir, checkpointPath(4), AVERAGE_WEIGHTS_FILE)));
  assert.deepEqual(last.state.handOver, h);
  assert.deepEqual(last.state.weightAverage, { firstStep: 1, count: 4 });
  assert.equal(outcome.weightAverage, null, 'the trained policy is not the average');
  assert.ok((await store.getMetrics(runA)).some((p) => p.step === 4 && p.name === 'time/select_s'), 'the selection is timed');
  // The policy handed over plays as the chosen weights.
  assert.equal(await validationReturn(outcome.assets, loadModelFolder(join(runDir, checkpointPath(4))).params), h.candidates.find((c) => c.weights === 1)!.meanReturn);
});

test('a finished run resumed for one more step continues the same average and RL weights, and chooses again', async () => {
  const other = await openStore(join(dir, 'longer.db'));
  try {
    const longer = { ...settings, steps: 5, optimizer: { ...settings.optimizer, totalSteps: 5 } };
    // The uninterrupted 5-step run against the 4-step run (which handed over step 1) resumed for step 5.
    const runB = await newTrainRun(other);
    const events: TrainEvent[] = [];
    const straight = await trainRun({ spec: pickSpec, options: {}, settings: longer, store: other, runId: runB, resume: null, onEvent: (e) => events.push(e) });
    await straight.policy.close();
    // The choice announces its candidates, then reports each as it is played.
    const selecting = events.filter((e) => e.type === 'select' || (e.type === 'phase' && e.phase === 'select'));
    assert.deepEqual(selecting[0], { type: 'phase', phase: 'select', message: `choosing the policy to hand over: 6 candidates, each greedy on ${EPISODES} validation seeds` });
    assert.deepEqual(selecting.slice(1).map((e) => e.type === 'select' && [e.index, e.count, e.candidate]), straight.handOver!.candidates.map((c, i) => [i, 6, c]));
    const runC = await newTrainRun(other);
    const four = await trainRun({ spec: pickSpec, options: {}, settings: { ...settings, optimizer: longer.optimizer }, store: other, runId: runC, resume: null });
    await four.policy.close();
    assert.equal(four.handOver?.chosen, 1, 'the resumed checkpoint holds a chosen step, RL weights and the average apart');
    const checkpoint = loadTrainCheckpoint(join(other.runDir(runC), checkpointPath(4)), parseTrainerState);
    const resumed = await trainRun({ spec: pickSpec, options: {}, settings: longer, store: other, runId: runC, resume: checkpoint });
    await resumed.policy.close();
    assert.deepEqual(metricsAt(await other.getMetrics(runC), 5), metricsAt(await other.getMetrics(runB), 5));
    assert.deepEqual(resumed.handOver, straight.handOver);
    assert.deepEqual(resumed.handOver?.candidates.map((c) => c.weights), ['average', 5, 4, 3, 2, 1]);
    const b = loadTrainCheckpoint(join(other.runDir(runB), checkpointPath(5)), parseTrainerState);
    const c = loadTrainCheckpoint(join(other.runDir(runC), checkpointPath(5)), parseTrainerState);
    assertSameWeights(c.params, b.params, 'the handed-over weights');
    const rl = (runDir: string) => loadRlWeights(join(runDir, checkpointPath(5)), outcome.assets.cfg);
    assertSameWeights(rl(other.runDir(runC)), rl(other.runDir(runB)), "RL's own weights");
    assertSameWeights(c.averageParams ?? c.params, b.averageParams ?? b.params, 'the average');
  } finally {
    await other.close();
  }
});

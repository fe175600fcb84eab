/**
 * The training loop end to end on a toy env with a tiny model (threads 1): default model, warm
 * start, RL steps with metrics in the store, checkpoints (weights, optimizer state, trainer state),
 * the final evaluation and the report files; resuming from a checkpoint replays exactly what the
 * uninterrupted run did; and evaluations between steps leave training as it would be without them.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { writeTrainReport } from '../../src/report/train-report.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { tree } from '../../src/model/engine.ts';
import { toParams } from '../../src/model/params.ts';
import { findRunCheckpoint } from '../../src/policy/run-checkpoint.ts';
import { loadModelFolder, loadTrainCheckpoint } from '../../src/train/checkpoint-io.ts';
import { parseTrainConfig, type TrainSettings } from '../../src/train/train-config.ts';
import { trainRun, WARM_START_PATH, type TrainOutcome } from '../../src/train/trainer.ts';
import { periodicEval } from '../../src/train/trainer-eval.ts';
import { finalEvaluation } from '../../src/train/trainer-final.ts';
import { trainerPolicy } from '../../src/train/trainer-policy.ts';
import { parseTrainerState } from '../../src/train/trainer-state.ts';
import { learnedWarmStart, metricsAt, newTrainRun, pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';
import { trainedPickRun } from './trained-pick-run.ts';

const settings: TrainSettings = parseTrainConfig(
  tinyTrainConfig({
    steps: 3,
    checkpointEvery: 2,
    evalEvery: 2,
    warmStart: learnedWarmStart,
    optimizer: { lr: 1e-3 },
  }),
);

let dir: string;
let store: Store;
let runA: string;
let outcome: TrainOutcome;

before(async () => {
  ({ dir, store, runId: runA, outcome } = await trainedPickRun('spindle-train-', settings));
});

after(async () => {
  await outcome?.policy.close();
  await store?.close();
});

test('the loop runs end to end: metrics per step, checkpoints, warm start folder', async () => {
  assert.equal(outcome.steps, 3);
  assert.equal(outcome.episodes, 3 * settings.batchSeeds * settings.groupSize);
  const metrics = await store.getMetrics(runA);
  for (const step of [1, 2, 3]) {
    const m = metricsAt(metrics, step);
    for (const name of ['reward/mean', 'advantage/std', 'groups/zero_variance', 'actions/invalid_rate', 'episodes/truncation_rate', 'episodes/length', 'tokens/completion']) {
      assert.ok(name in m, `step ${step} logs ${name}`);
    }
    assert.ok(metrics.some((p) => p.step === step && p.name === 'time/rollout_s'));
    assert.ok(metrics.some((p) => p.step === step && p.name === 'throughput/rollout_tokens_per_s'));
  }
  // Every reward part by name (rule 7): the env's outcome and the invalid-action penalty.
  assert.ok(metrics.some((p) => p.name === 'reward/outcome'), 'reward/outcome logged');
  // Some step trained (groups with different rewards), and its loss metrics were logged.
  const trained = [1, 2, 3].map((s) => metricsAt(metrics, s)).filter((m) => (m['train/updates'] ?? 0) > 0);
  assert.ok(trained.length > 0, 'at least one step had groups to learn from');
  for (const name of ['kl/policy', 'clip/frac', 'train/entropy', 'train/grad_norm']) assert.ok(name in trained[0], `logs ${name}`);
  // Evaluations after the warm start (step 0), every 2 steps and at the end.
  assert.deepEqual(metrics.filter((p) => p.name === 'eval/mean_return').map((p) => p.step), [0, 2, 3]);

  const records = await store.listCheckpoints(runA);
  assert.deepEqual(records.map((r) => [r.step, r.path, r.policyVersion]), [
    [0, 'warm-start', 0],
    [2, 'checkpoints/step-000002', 2],
    [3, 'checkpoints/step-000003', 3],
  ]);
  const runDir = store.runDir(runA);
  const last = loadTrainCheckpoint(join(runDir, 'checkpoints/step-000003'), parseTrainerState);
  assert.equal(last.state.step, 3);
  assert.equal(last.state.rng.nextStep, 4);
  assert.equal(last.optimizer?.step, Number(metricsAt(metrics, 1)['train/updates'] ?? 0) + Number(metricsAt(metrics, 2)['train/updates'] ?? 0) + Number(metricsAt(metrics, 3)['train/updates'] ?? 0));

  // The weight average (from 0.6 × 3 steps: steps 1-3): a checkpoint's model is the mean so far,
  // RL's own weights sit beside it, and the mean of steps 1-3 extends the mean of steps 1-2 by step 3.
  assert.deepEqual(outcome.weightAverage, { firstStep: 1, lastStep: 3, count: 3 });
  const mid = loadTrainCheckpoint(join(runDir, 'checkpoints/step-000002'), parseTrainerState);
  assert.deepEqual(mid.state.weightAverage, { firstStep: 1, count: 2 });
  assert.deepEqual(last.state.weightAverage, { firstStep: 1, count: 3 });
  let moved = 0;
  for (const name of Object.keys(last.params)) {
    const [m2, r3, m3] = [mid.params[name].data, last.rlParams![name].data, last.params[name].data];
    for (let i = 0; i < m3.length; i++) {
      assert.ok(Math.abs(m3[i] - (2 * m2[i] + r3[i]) / 3) < 1e-6, `${name}[${i}]`);
      if (m3[i] !== r3[i]) moved++;
    }
  }
  assert.ok(moved > 0, 'the average differs from the last step where RL moved the weights');
});

test('run:RUN@0 is the warm start that the step-0 evaluation scored (version 0, which sampled step 1)', async () => {
  const found = await findRunCheckpoint(store, { runId: runA, step: 0 }, '--policy');
  assert.equal(found.dir, join(store.runDir(runA), WARM_START_PATH));
  const p = toParams(loadModelFolder(found.dir).params);
  const policy = trainerPolicy(outcome.assets, p, { name: 'step 0', modelId: 'step-0', version: 0, maxBatchRows: settings.rollout.maxBatchRows });
  tree.dispose(p);
  try {
    const again = await periodicEval({ spec: pickSpec, options: {}, policy, episodes: settings.evalEpisodes, maxTurns: outcome.maxTurns, maxTokens: outcome.maxTokens, concurrency: settings.rollout.concurrency });
    const step0 = metricsAt(await store.getMetrics(runA), 0);
    assert.equal(again.meanReturn, step0['eval/mean_return']);
    assert.equal(again.invalidRate, step0['eval/invalid_rate']);
  } finally {
    await policy.close();
  }
  // Step 1's rollouts were sampled by policy version 0.
  const [first] = (await store.listTrajectories(runA, {})).items.filter((t) => t.turns[0]?.calls[0]?.completion.policyVersion !== undefined);
  assert.equal(first?.turns[0].calls[0].completion.policyVersion, 0);
});

test('the final evaluation and the report files', async () => {
  const final = await finalEvaluation({
    spec: pickSpec,
    options: {},
    settings,
    trained: outcome.policy,
    runDir: outcome.runDir,
    warmStartPath: outcome.warmStart!.path,
    maxTurns: outcome.maxTurns,
    maxTokens: outcome.maxTokens,
  });
  assert.deepEqual(final.report.policies.map((p) => p.policy), [outcome.policy.name, 'warm-start', 'random', 'oracle'].filter((n) => n !== 'oracle' || final.report.policies.some((p) => p.policy === 'oracle')));
  assert.ok('random' in final.baselines && 'warm-start' in final.baselines);
  const files = writeTrainReport(outcome.runDir, {
    runId: runA,
    env: 'pick',
    envOptions: {},
    config: settings as unknown as Record<string, unknown>,
    steps: outcome.steps,
    episodes: outcome.episodes,
    wallSeconds: outcome.wallSeconds,
    metrics: await store.getMetrics(runA),
    warmStart: outcome.warmStart,
    finalEval: final.report,
    trainedPolicy: outcome.policy.name,
    weightAverage: null,
    handOver: null,
    finalEvalSeconds: 1,
  });
  assert.ok(existsSync(files.curve) && existsSync(files.report));
  assert.match(readFileSync(files.curve, 'utf8'), /^<svg [\s\S]*greedy return, held-out seeds[\s\S]*random \(/);
  const md = readFileSync(files.report, 'utf8');
  assert.match(md, /## Final evaluation/);
  assert.match(md, /\| warm-start \|/);
  assert.match(md, /## Where the time went/);
});

test('a run resumed from a checkpoint logs the same metrics and weights as the uninterrupted run', async () => {
  const other = await openStore(join(dir, 'resumed.db'));
  try {
    const runB = await newTrainRun(other);
    const checkpoint = loadTrainCheckpoint(join(store.runDir(runA), 'checkpoints/step-000002'), parseTrainerState);
    await assert.rejects(
      trainRun({ spec: pickSpec, options: {}, settings, store: other, runId: runB, resume: { ...checkpoint, rlParams: null } }),
      /the checkpoint of step 2 averages weights but has no rl-weights\.safetensors/,
    );
    const resumed = await trainRun({ spec: pickSpec, options: {}, settings, store: other, runId: runB, resume: checkpoint });
    await resumed.policy.close();
    const a = metricsAt(await store.getMetrics(runA), 3);
    const b = metricsAt(await other.getMetrics(runB), 3);
    assert.ok(a['train/updates'] > 0, 'step 3 trained, so the comparison covers the optimizer too');
    assert.deepEqual(b, a);
    const wa = loadModelFolder(join(store.runDir(runA), 'checkpoints/step-000003')).params;
    const wb = loadModelFolder(join(other.runDir(runB), 'checkpoints/step-000003')).params;
    for (const name of Object.keys(wa)) assert.deepEqual(wb[name].data, wa[name].data, name);
    const ra = loadTrainCheckpoint(join(store.runDir(runA), 'checkpoints/step-000003'), parseTrainerState);
    const rb = loadTrainCheckpoint(join(other.runDir(runB), 'checkpoints/step-000003'), parseTrainerState);
    assert.deepEqual(rb.state.weightAverage, ra.state.weightAverage);
    for (const name of Object.keys(wa)) assert.deepEqual(rb.rlParams![name].data, ra.rlParams![name].data, `rl ${name}`);
  } finally {
    await other.close();
  }
});

test('evaluations during training do not shape it: without them the steps log the same training metrics', async () => {
  const other = await openStore(join(dir, 'evals.db'));
  try {
    // A seed whose prompts computed from the evaluation's caches round differently from computed whole
    // (seeds 2 and 3 do, 0 and 1 happen not to): without the trainer emptying the caches, step 2 differs.
    const seed = 2;
    const train = async (evalEvery: number) => {
      const runId = await newTrainRun(other);
      const outcome = await trainRun({ spec: pickSpec, options: {}, settings: { ...settings, seed, evalEvery }, store: other, runId, resume: null });
      await outcome.policy.close();
      return other.getMetrics(runId);
    };
    // Every step after an evaluation, against none but step 0's (after the warm start, in both).
    const [every, none] = [await train(1), await train(100)];
    const training = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([name]) => !/^(eval|time|throughput)\//.test(name)));
    for (const step of [1, 2, 3]) assert.deepEqual(training(metricsAt(every, step)), training(metricsAt(none, step)), `step ${step}`);
  } finally {
    await other.close();
  }
});

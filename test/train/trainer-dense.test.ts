/**
 * A run with per-decision groups on a dense env (advantage.estimator 'dense'): every decision draws
 * k answers, the env scores each exactly, and the samples of each decision are trained against each
 * other; the config and the env are checked first.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initEngine } from '../../src/model/engine.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { trainRun } from '../../src/train/trainer.ts';
import { loadTrainCheckpoint } from '../../src/train/checkpoint-io.ts';
import { parseTrainerState } from '../../src/train/trainer-state.ts';
import { kellySpec } from '../../src/envs/kelly/spec.ts';
import { densePickSpec, learnedWarmStart, newTrainRun, pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

let store: Store;

before(async () => {
  await initEngine({ threads: 1 });
  store = await openStore(join(tempDir('spindle-dense-'), 'spindle.db'));
});

after(async () => {
  await store?.close();
});

const newRun = () => newTrainRun(store, 'pick-dense');

const dense = {
  steps: 2,
  // A warm start long enough that most answers are legal picks (as trainer-run.test.ts).
  warmStart: learnedWarmStart,
  groupSize: 1,
  batchSeeds: 8,
  episode: { decisionSamples: 4 },
  advantage: { estimator: 'dense' as const },
};

test('each decision draws 4 answers scored exactly, and its samples train against each other', async () => {
  const settings = parseTrainConfig(tinyTrainConfig(dense));
  const runId = await newRun();
  const outcome = await trainRun({ spec: densePickSpec, options: {}, settings, store, runId, resume: null });
  await outcome.policy.close();
  const metrics = await store.getMetrics(runId);
  const at = (step: number, name: string) => metrics.find((m) => m.step === step && m.name === name)?.value;
  for (const step of [1, 2]) {
    assert.equal(at(step, 'groups/count'), 8, 'one group per decision: 8 one-decision episodes');
    assert.ok((at(step, 'tokens/alternatives') ?? 0) > 0, 'the other answers were generated');
    // Every scored answer is a sample (8 x 4 at most, fewer when an answer could not be trained on).
    const calls = at(step, 'samples/trained_calls') ?? 0;
    assert.ok(calls > 8 && calls <= 32, `trained calls ${calls}`);
  }
  assert.ok((at(1, 'train/updates') ?? 0) + (at(2, 'train/updates') ?? 0) > 0, 'some decision had samples that differed');
  // The stored trajectories keep each call's decision samples.
  const { items } = await store.listTrajectories(runId, { limit: 1 });
  const trajectory = await store.getTrajectory(items[0].id);
  const decision = trajectory!.turns[0].calls[0].decision!;
  assert.equal(decision.alternatives.length, 3);
  assert.equal(decision.rewards.length, 4);
  for (const r of decision.rewards) assert.ok(r === 1 || r === 0 || r === -1, `reward ${r}: a pick scores 1 or 0, an invalid answer the penalty -1`);
});

test('update.accumulate: the layouts of a step add their gradients into one optimiser update', async () => {
  // 2-row layouts, so a step's 8 decisions × 4 answers fill several.
  const settings = parseTrainConfig(tinyTrainConfig({ ...dense, update: { rows: 2, rowLength: 64, accumulate: true } }));
  const runId = await newRun();
  const outcome = await trainRun({ spec: densePickSpec, options: {}, settings, store, runId, resume: null });
  await outcome.policy.close();
  const steps = loadTrainCheckpoint(join(store.runDir(runId), 'checkpoints/step-000002'), parseTrainerState).optimizer?.step;
  const metrics = await store.getMetrics(runId);
  const at = (step: number, name: string) => metrics.find((m) => m.step === step && m.name === name)?.value ?? 0;
  assert.ok(at(1, 'train/layouts') + at(2, 'train/layouts') > 2, `several layouts: ${at(1, 'train/layouts')} + ${at(2, 'train/layouts')}`);
  for (const step of [1, 2]) assert.equal(at(step, 'train/updates'), at(step, 'train/layouts') > 0 ? 1 : 0, `step ${step}: one update`);
  // The optimiser counted one update a trained step (and the warm start's own optimiser is separate).
  assert.equal(steps, at(1, 'train/updates') + at(2, 'train/updates'));
  for (const step of [1, 2]) if (at(step, 'train/updates') > 0) assert.ok(Number.isFinite(at(step, 'train/grad_norm')) && at(step, 'train/grad_norm') > 0);
});

test('the dense estimator needs decision samples and an env that scores its actions', async () => {
  assert.throws(() => parseTrainConfig({ advantage: { estimator: 'dense' } }), /train\.episode\.decisionSamples: the dense estimator compares the samples of a decision, so it needs at least 2/);
  const settings = parseTrainConfig(tinyTrainConfig(dense));
  await assert.rejects(
    trainRun({ spec: pickSpec, options: {}, settings, store, runId: await newRun(), resume: null }),
    /train\.advantage\.estimator: 'dense' needs an env that scores every legal action \(actionRewards\); 'pick' does not/,
  );
  // Report answers get no credit from action values: with report questions the run must train them supervised.
  const withReports = kellySpec.options.parse({ report: true });
  await assert.rejects(
    trainRun({ spec: kellySpec, options: withReports, settings, store, runId: await newRun(), resume: null }),
    /train\.report\.mode: 'dense' compares the actions of a decision.*"report": \{"mode": "supervised"\}/,
  );
});

test('advantage.explore: the picks no answer took join their decisions, trained as explored answers', async () => {
  // One answer a decision besides the played one, so most decisions leave a pick to explore.
  const settings = parseTrainConfig(tinyTrainConfig({ ...dense, steps: 1, episode: { decisionSamples: 2 }, advantage: { estimator: 'dense', explore: 2 }, saveTrajectoriesPerStep: 8 }));
  const runId = await newRun();
  const outcome = await trainRun({ spec: densePickSpec, options: {}, settings, store, runId, resume: null });
  await outcome.policy.close();
  const metrics = await store.getMetrics(runId);
  const at = (name: string) => metrics.find((m) => m.step === 1 && m.name === name)?.value;
  // The stored decisions record every pick's reward; the explored answers are not stored.
  const { items } = await store.listTrajectories(runId, { limit: 100 });
  const decisions = items.map((t) => ({ t, decision: t.turns[0].calls[0].decision })).filter((d) => d.decision !== undefined);
  assert.equal(decisions.length, 8, 'the step\'s 8 episodes');
  for (const { t, decision } of decisions) {
    assert.equal(decision!.alternatives.length, 1);
    assert.deepEqual(decision!.actionValues!.map((v) => v.action.arguments.n), [1, 2, 3]);
    for (const v of decision!.actionValues!) assert.equal(v.reward, v.action.arguments.n === t.turns[0].state!.target ? 1 : 0);
  }
  // A decision whose played answer was refused is skipped; the others explore the 1 or 2 picks their answers left.
  const explorable = decisions.filter((d) => !d.decision!.invalid[0]).length;
  assert.equal(at('samples/explore_skipped'), 8 - explorable);
  const explored = at('samples/explored') ?? 0;
  assert.ok(explored >= explorable && explored <= 2 * explorable && explored > 0, `explored ${explored} of ${explorable} decisions`);
  assert.equal(parseTrainConfig({ advantage: { estimator: 'dense', explore: 2 }, episode: { decisionSamples: 2 } }).advantage.estimator, 'dense');
  assert.throws(() => parseTrainConfig({ advantage: { estimator: 'dense', explore: -1 }, episode: { decisionSamples: 2 } }), /train\.advantage\.explore: must be ≥ 0/);
  assert.throws(() => parseTrainConfig({ advantage: { estimator: 'grpo', explore: 2 } }), /train\.advantage/);
});

/** `spindle train`'s config: defaults, flags over the file, and errors that name the field. */
import assert from 'node:assert/strict';
import { LayoutShapes } from '../../src/train/rl-batch.ts';
import { test } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { hmmSpec } from '../../src/envs/hmm/spec.ts';
import { rewardsForReportMode } from '../../src/rewards/report-mode.ts';
import { builtinEnvs } from '../../src/envs/builtin.ts';
import { trainPresetOf } from '../../src/envs/env.ts';
import { checkEnvSpec } from '../../src/envs/registry.ts';
import { applyFlagOverrides, klBetaAt, mergeTrainConfig, parseTrainConfig, rlLossConfig } from '../../src/train/train-config.ts';
import { counterSpec } from '../rollout/counter-spec.ts';

test('defaults: GRPO with zero-variance groups dropped, clipped loss, KL to the warm start, warm start on', () => {
  const c = parseTrainConfig({});
  assert.equal(c.advantage.estimator, 'grpo');
  assert.equal(c.advantage.dropZeroVariance, true);
  assert.equal(c.loss.policyLoss, 'ppo_clip');
  assert.equal(c.loss.klBeta, 1);
  // Setting another loss field keeps the KL default; 0 turns it off.
  assert.equal(parseTrainConfig({ loss: { clipHigh: 0.3 } }).loss.klBeta, 1);
  assert.equal(parseTrainConfig({ loss: { klBeta: 0 } }).loss.klBeta, 0);
  assert.equal(c.warmStart.languageModel, true);
  assert.equal(c.groupSize, 4);
  assert.equal(c.batchSeeds, 64);
  assert.equal(c.episode.temperature, 1);
  assert.equal(c.samples.mergeIdentical, true);
  // Rows follow the row length: 2,048 positions, 16 rows of Blackjack's 128.
  assert.deepEqual([c.update.rows, c.update.rowLength, c.update.miniBatches], [null, 128, 1]);
  assert.equal(new LayoutShapes({ rows: c.update.rows, length: c.update.rowLength }).rows, 16);
  assert.equal(new LayoutShapes({ rows: c.update.rows, length: 672 }).rows, 3);
  assert.equal(new LayoutShapes({ rows: c.update.rows, length: 4096 }).rows, 1);
  assert.equal(new LayoutShapes({ rows: 5, length: 672 }).rows, 5);
  const measured = new LayoutShapes({ rows: null, length: null });
  assert.ok(Number.isNaN(measured.rows));
  measured.fixLength(256);
  assert.equal(measured.rows, 8);
  // RL's lr decays over the run's steps; --lr keeps the schedule.
  assert.deepEqual([c.optimizer.lr, c.optimizer.decay, c.optimizer.minLrRatio, c.optimizer.totalSteps], [1e-3, 'cosine', 0.1, c.steps]);
  const flagged = parseTrainConfig(applyFlagOverrides({}, { lr: 5e-4, steps: 40 }));
  assert.deepEqual([flagged.optimizer.lr, flagged.optimizer.decay, flagged.optimizer.totalSteps], [5e-4, 'cosine', 40]);
  assert.ok(c.warmStart.maxSteps > 0);
  assert.equal(c.threads, null);
});

test('flags override the file; the file fills what flags do not give', () => {
  const merged = applyFlagOverrides({ steps: 10, groupSize: 8, optimizer: { lr: 0.1, warmupSteps: 3 } }, { steps: 20, lr: 0.5, seed: 7 });
  const c = parseTrainConfig(merged);
  assert.equal(c.steps, 20);
  assert.equal(c.groupSize, 8);
  assert.equal(c.seed, 7);
  assert.equal(c.optimizer.lr, 0.5);
  assert.equal(c.optimizer.warmupSteps, 3);
});

test("RL's cosine decay counts RL steps and ends with the run unless totalSteps is given", () => {
  assert.equal(parseTrainConfig({ steps: 120, optimizer: { lr: 1e-3, decay: 'cosine' } }).optimizer.totalSteps, 120);
  assert.equal(parseTrainConfig({ steps: 120, optimizer: { lr: 1e-3, decay: 'cosine', totalSteps: 80 } }).optimizer.totalSteps, 80);
  assert.equal(parseTrainConfig({ optimizer: { decay: 'constant' } }).optimizer.totalSteps, undefined);
});

test('a bad field is a UsageError naming it', () => {
  const cases: [unknown, RegExp][] = [
    [{ steps: -1 }, /train\.steps/],
    [{ groupSize: 0 }, /train\.groupSize/],
    [{ warmStart: { maxSteps: 'many' } }, /train\.warmStart\.maxSteps/],
    [{ optimizer: { lr: 0.1, betaOne: 0.9 } }, /train\.optimizer/],
    [{ warmStart: { optimizer: { lr: 0.1, decay: 'cosine' } } }, /train\.warmStart\.optimizer\.totalSteps/],
    [{ loss: { lengthNorm: 'dr_grpo' } }, /train\.loss\.maxCompletionTokens/],
    [{ advantage: { estimator: 'ppo' } }, /train\.advantage/],
    [{ typo: 1 }, /train: .*typo|Unrecognized key/],
    [{ seed: 2 ** 40 }, /train\.seed/],
    [{ update: { rows: 0 } }, /train\.update\.rows/],
    [{ update: { rowMultiple: 0 } }, /train\.update\.rowMultiple/],
    [{ loss: { klBetaEndRatio: -0.1 } }, /train\.loss\.klBetaEndRatio/],
    [{ loss: { klBetaEndRatio: 2 } }, /train\.loss\.klBetaEndRatio/],
  ];
  for (const [config, message] of cases) {
    assert.throws(() => parseTrainConfig(config), (e: unknown) => e instanceof UsageError && message.test(e.message), JSON.stringify(config));
  }
  assert.throws(() => applyFlagOverrides([1, 2], {}), /train config: must be a JSON object/);
  assert.throws(() => applyFlagOverrides({ optimizer: 3 }, { lr: 0.1 }), /train\.optimizer: must be an object/);
});

test('β schedule: linear from klBeta at step 1 to klBeta × klBetaEndRatio at the last step', () => {
  const annealed = parseTrainConfig({ steps: 5, loss: { klBeta: 2, klBetaEndRatio: 0.2 } });
  assert.deepEqual([1, 2, 3, 4, 5].map((s) => Number(klBetaAt(annealed.loss, s, annealed.steps).toFixed(6))), [2, 1.6, 1.2, 0.8, 0.4]);
  const tenth = parseTrainConfig({ steps: 11, loss: { klBetaEndRatio: 0.1 } });
  assert.deepEqual([1, 6, 11].map((s) => Number(klBetaAt(tenth.loss, s, tenth.steps).toFixed(6))), [1, 0.55, 0.1]);
  // The default anneals 1 → 0; a ratio of 1 keeps β constant; β 0 stays off.
  const byDefault = parseTrainConfig({ steps: 5 });
  assert.deepEqual([1, 3, 5].map((s) => klBetaAt(byDefault.loss, s, byDefault.steps)), [1, 0.5, 0]);
  const constant = parseTrainConfig({ steps: 5, loss: { klBetaEndRatio: 1 } });
  assert.deepEqual([1, 3, 5].map((s) => klBetaAt(constant.loss, s, constant.steps)), [1, 1, 1]);
  const off = parseTrainConfig({ steps: 5, loss: { klBeta: 0 } });
  assert.deepEqual([1, 5].map((s) => klBetaAt(off.loss, s, off.steps)), [0, 0]);
  // klBetaAnnealShare ends the anneal early: β 1 → 0 over the first half of 9 steps, then 0.
  const early = parseTrainConfig({ steps: 9, loss: { klBetaAnnealShare: 0.5 } });
  assert.deepEqual([1, 2, 3, 4, 5, 6, 9].map((s) => klBetaAt(early.loss, s, early.steps)), [1, 0.75, 0.5, 0.25, 0, 0, 0]);
  const heldAtTenth = parseTrainConfig({ steps: 5, loss: { klBetaEndRatio: 0.1, klBetaAnnealShare: 0.25 } });
  assert.deepEqual([1, 2, 5].map((s) => Number(klBetaAt(heldAtTenth.loss, s, heldAtTenth.steps).toFixed(6))), [1, 0.1, 0.1]);
  assert.throws(() => parseTrainConfig({ loss: { klBetaAnnealShare: 0 } }), /train\.loss\.klBetaAnnealShare: must be > 0/);
  assert.throws(() => parseTrainConfig({ loss: { klBetaAnnealShare: 1.5 } }), /train\.loss\.klBetaAnnealShare: must be ≤ 1/);
  // The loss itself never sees the schedule (its schema is strict).
  assert.equal('klBetaEndRatio' in rlLossConfig(annealed.loss), false);
  assert.equal('klBetaAnnealShare' in rlLossConfig(annealed.loss), false);
});

test('report: reward by default, supervised with a weight ≥ 0; a bad field is named', () => {
  assert.deepEqual(parseTrainConfig({}).report, { mode: 'reward', weight: 1 });
  assert.deepEqual(parseTrainConfig({ report: { mode: 'supervised' } }).report, { mode: 'supervised', weight: 1 });
  assert.deepEqual(parseTrainConfig({ report: { mode: 'supervised', weight: 0.5 } }).report, { mode: 'supervised', weight: 0.5 });
  const cases: [unknown, RegExp][] = [
    [{ report: { mode: 'sft' } }, /train\.report\.mode/],
    [{ report: { weight: -1 } }, /train\.report\.weight: must be ≥ 0/],
    [{ report: { weight: 'high' } }, /train\.report\.weight/],
    [{ report: { mode: 'supervised', wieght: 2 } }, /train\.report/],
    [{ report: 'supervised' }, /train\.report/],
  ];
  for (const [config, pattern] of cases) {
    assert.throws(() => parseTrainConfig(config), (e: unknown) => e instanceof UsageError && pattern.test(e.message), JSON.stringify(config));
  }
});

test("report.mode picks the forecast part's weight in the RL reward: the env's in reward mode, 0 in supervised mode", () => {
  const rewards = hmmSpec.rewards!(hmmSpec.options.parse({ report: true, reportWeight: 2 }));
  assert.equal(rewardsForReportMode(rewards, 'reward'), rewards);
  const supervised = rewardsForReportMode(rewards, 'supervised')!;
  assert.deepEqual(supervised.weights, { ...rewards.weights, forecast: 0 });
  assert.deepEqual(supervised.fns.map((f) => f.name), ['forecast'], 'still scored and recorded');
  assert.equal(rewards.weights.forecast, 2, 'the env config is not changed');
  assert.equal(rewardsForReportMode(undefined, 'supervised'), undefined);
});

test("an env's train preset sits under the user's config and flags, field by field", () => {
  const preset = { groupSize: 8, batchSeeds: 4, update: { rowLength: null }, warmStart: { optimizer: { lr: 2e-3 } } };
  const file = { batchSeeds: 6, update: { epochs: 2 }, warmStart: { optimizer: { warmupSteps: 3 } } };
  const merged = mergeTrainConfig(preset, applyFlagOverrides(file, { groupSize: 4 }));
  assert.deepEqual(merged, { groupSize: 4, batchSeeds: 6, update: { rowLength: null, epochs: 2 }, warmStart: { optimizer: { lr: 2e-3, warmupSteps: 3 } } });
  const c = parseTrainConfig(merged);
  assert.deepEqual([c.groupSize, c.batchSeeds, c.update.rowLength, c.update.epochs, c.warmStart.optimizer.lr], [4, 6, null, 2, 2e-3]);
  // A value that is not an object replaces the preset's object (and is then validated as usual).
  assert.throws(() => parseTrainConfig(mergeTrainConfig(preset, { update: 3 })), /train\.update/);
  // The preset is not changed.
  assert.deepEqual(preset.update, { rowLength: null });
});

test('built-in presets are valid configs; every env but Blackjack measures its row length and bounds the KL; dense envs train dense', () => {
  for (const spec of builtinEnvs) {
    const preset = trainPresetOf(spec, spec.options.parse({}));
    const c = parseTrainConfig(preset);
    // Blackjack runs on the defaults but for the estimator (the critic, with its default options, no tied groups dropped) and 200 steps.
    if (spec.name === 'blackjack') assert.deepEqual(preset, { advantage: { estimator: 'critic' }, steps: 200 });
    else assert.equal(c.update.rowLength, null, spec.name);
    // The ten-turn envs decode at most 64 rows at once (their keys and values grow with the context).
    if (!['blackjack', 'nim'].includes(spec.name)) assert.equal(c.rollout.maxBatchRows, 64, spec.name);
    // Every preset bounds each token's KL (multi-token answers); Blackjack's one-token answers do not need it.
    assert.equal(c.loss.klMax, spec.name === 'blackjack' ? null : 10, spec.name);
    // Nim weighs its KL at 0.05 (at β 1 RL did not move its greedy answers in 78 steps), newsvendor at
    // 0.1 for 150 steps (the first run that read the day), the bandit at 0.1 for 100 (0.08 → 0.56); the others keep β 1.
    assert.equal(c.loss.klBeta, { nim: 0.05, newsvendor: 0.1, bandit: 0.1 }[spec.name] ?? 1, `${spec.name}: the KL's weight`);
    assert.equal(c.steps, { newsvendor: 150, bandit: 100, blackjack: 200 }[spec.name] ?? 250, `${spec.name}: steps`);
    // The bandit chooses the policy it hands over among its checkpoints every 10 steps from step 60 and
    // their average, on 1,000 validation seeds (its single steps' weights swing late); the others hand over the average.
    assert.deepEqual([c.select.episodes, c.checkpointEvery], spec.name === 'bandit' ? [1000, 10] : [null, 50], `${spec.name}: choosing the handed-over policy`);
    // Blackjack anneals β to 0 (the default); the others keep it constant, as they were measured.
    assert.equal(c.loss.klBetaEndRatio, spec.name === 'blackjack' ? 0 : 1, `${spec.name}: the KL's schedule`);
    // Every env trains refused answers at the penalty, also in groups dropped for tying (a format collapse heals).
    assert.equal(c.samples.invalidAnswers, 'penalize', spec.name);
    // Dense envs compare each decision's 8 answers by their exact values, in 4 accumulated updates.
    const dense = ['bandit', 'kelly', 'newsvendor', 'hmm'].includes(spec.name);
    assert.equal(c.advantage.estimator, dense ? 'dense' : spec.name === 'blackjack' ? 'critic' : 'grpo', spec.name);
    if (dense) {
      assert.equal(spec.kind, 'dense', spec.name);
      assert.deepEqual([c.groupSize, c.batchSeeds, c.episode.decisionSamples, c.samples.invalidAnswers, c.update.accumulate, c.update.miniBatches], [1, 8, 8, 'penalize', true, 4], spec.name);
    } else assert.equal(c.update.accumulate, false, spec.name);
    // With report questions (no credit from action values) a dense env keeps episode GRPO, and the run is valid.
    const withReports = spec.options.safeParse({ report: true });
    if (dense && withReports.success) {
      const r = parseTrainConfig(trainPresetOf(spec, withReports.data));
      assert.deepEqual([r.advantage.estimator, r.groupSize, r.batchSeeds, r.update.accumulate], ['grpo', 8, 4, false], `${spec.name} report=true`);
    }
  }
});

test("Blackjack's preset keeps 250 steps under the sab and natural rules (200 left both just past 0.02 from their optima)", () => {
  for (const option of ['sab', 'natural']) {
    const variant = parseTrainConfig(trainPresetOf(blackjackSpec, blackjackSpec.options.parse({ [option]: true })));
    assert.deepEqual([variant.steps, variant.advantage.estimator], [250, 'critic'], option);
  }
});

test('a user env whose train preset is not a valid config is refused, naming the field', () => {
  assert.throws(
    () => checkEnvSpec({ ...counterSpec, train: { groupSize: 0 } }, './my-env.ts'),
    (err: unknown) => err instanceof UsageError && /\.\/my-env\.ts: its train preset/.test(err.message) && /train\.groupSize/.test(err.message),
  );
  assert.throws(() => checkEnvSpec({ ...counterSpec, train: [1] }, './my-env.ts'), /train/);
  const fixed = checkEnvSpec({ ...counterSpec, train: { steps: 5 } }, './my-env.ts');
  assert.equal(trainPresetOf(fixed, {}).steps, 5);
  // A preset can depend on the options; it is checked for the default ones.
  const byOptions = checkEnvSpec({ ...counterSpec, train: (o: Record<string, unknown>) => ({ steps: o.report ? 7 : 5 }) }, './my-env.ts');
  assert.deepEqual([trainPresetOf(byOptions, {}).steps, trainPresetOf(byOptions, { report: true }).steps], [5, 7]);
  assert.throws(
    () => checkEnvSpec({ ...counterSpec, train: () => ({ batchSeeds: -1 }) }, './my-env.ts'),
    (err: unknown) => err instanceof UsageError && /its train preset/.test(err.message) && /train\.batchSeeds/.test(err.message),
  );
});

/** The tabular control learns Blackjack from outcome rewards through the shared advantage, loss and optimiser code. */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { initEngine } from '../../src/model/engine.ts';
import { blackjackSpace } from '../../src/train/tabular-space.ts';
import { parseTabularTrainConfig, trainTabular } from '../../src/train/tabular-train.ts';

const RANDOM_RETURN = -0.396; // uniform stick/hit (DESIGN reference facts)
const options = blackjackSpec.options.parse({});

before(async () => {
  await initEngine({ threads: 1 });
});

test('tabular learner: 10k episodes take the softmax policy clearly above random', async () => {
  const r = await trainTabular(blackjackSpec, options, blackjackSpace(), { maxEpisodes: 10_240, evalEvery: 5_000, seed: 1 });
  const first = r.history[0];
  const last = r.history[r.history.length - 1];
  assert.deepEqual([first.episodes, last.episodes], [0, 10_240]);
  assert.ok(Math.abs(first.stochasticReturn - RANDOM_RETURN) < 1e-3, `untrained table is uniform: ${first.stochasticReturn}`);
  assert.ok(last.stochasticReturn > -0.25, `after ${r.episodes} episodes the stochastic policy returns ${last.stochasticReturn}`);
  assert.ok(last.greedyReturn > -0.16, `greedy table ${last.greedyReturn} (always stick: −0.186)`);
  assert.ok(last.greedyReturn < r.optimalReturn + 1e-9 && last.stochasticReturn < r.optimalReturn + 1e-9);
  // One step per batch is on-policy: the table's log π of what was sampled equals the recorded logprob.
  assert.ok(Math.abs(r.lastMetrics.ratioMean - 1) < 1e-5, `ratio ${r.lastMetrics.ratioMean}`);
  assert.ok(Math.abs(r.lastMetrics.approxKl) < 1e-6);
  assert.equal(r.lastMetrics.clipFracLow + r.lastMetrics.clipFracHigh, 0);
  assert.ok(r.lastMetrics.entropy > 0 && r.lastMetrics.entropy < Math.LN2);
});

test('tabular learner: several updates per batch move the ratio off 1 and the clip takes effect', async () => {
  const r = await trainTabular(blackjackSpec, options, blackjackSpace(), {
    maxEpisodes: 1_024,
    evalEvery: 1_024,
    groupSize: 4,
    groupsPerBatch: 64,
    updatesPerBatch: 6,
    optimizer: { lr: 0.5, maxGradNorm: null },
  });
  assert.equal(r.steps, 4 * 6);
  const m = r.lastMetrics;
  assert.ok(m.approxKl > 1e-3, `approx KL ${m.approxKl}`);
  assert.ok(m.clipFracLow + m.clipFracHigh > 0, `clip fractions ${m.clipFracLow}, ${m.clipFracHigh}`);
});

test('tabular learner: the KL to the starting (uniform) table holds the policy back, and its schedule ends at klBeta × klBetaEndRatio', async () => {
  const run = (config: object) =>
    trainTabular(blackjackSpec, options, blackjackSpace(), { maxEpisodes: 8_192, evalEvery: 8_192, groupsPerBatch: 64, seed: 2, ...config });
  const free = await run({});
  const held = await run({ loss: { klBeta: 1 } });
  const annealed = await run({ loss: { klBeta: 1 }, klBetaEndRatio: 0 });
  const entropyOf = (r: typeof free) => r.lastMetrics.entropy;
  assert.equal(free.lastMetrics.refKl, undefined, 'no reference without a KL');
  assert.ok(held.lastMetrics.refKl > 0 && held.lastMetrics.klLoss > 0, `KL ${held.lastMetrics.refKl}, loss ${held.lastMetrics.klLoss}`);
  assert.ok(entropyOf(held) > entropyOf(free) + 0.05, `entropy with the KL ${entropyOf(held)}, without ${entropyOf(free)}`);
  // Annealed to 0: the last batch's KL term weighs nothing, though the policy has left the reference.
  assert.ok(annealed.lastMetrics.refKl > 0);
  assert.equal(annealed.lastMetrics.klLoss, 0);
  const last = (r: typeof free) => r.history[r.history.length - 1].stochasticReturn;
  assert.ok(last(held) < last(free), `stochastic return with the KL ${last(held)}, without ${last(free)}`);
});

test('tabular learner: the entropy bonus keeps the table softer, and is logged', async () => {
  const run = (config: object) => trainTabular(blackjackSpec, options, blackjackSpace(), { maxEpisodes: 8_192, evalEvery: 8_192, groupsPerBatch: 64, seed: 3, optimizer: { lr: 0.3 }, ...config });
  const free = await run({});
  const bonus = await run({ loss: { entropyCoef: 0.1 } });
  assert.equal(free.lastMetrics.entropyBonus, undefined);
  assert.ok(Math.abs(bonus.lastMetrics.entropyBonus - 0.1 * bonus.lastMetrics.entropy) < 1e-6, `bonus ${bonus.lastMetrics.entropyBonus}, entropy ${bonus.lastMetrics.entropy}`);
  assert.ok(bonus.lastMetrics.entropy > free.lastMetrics.entropy + 0.05, `entropy with the bonus ${bonus.lastMetrics.entropy}, without ${free.lastMetrics.entropy}`);
});

test('tabular config: a bad field is a UsageError naming it', () => {
  assert.throws(() => parseTabularTrainConfig({ groupSize: 0 }), /tabular\.groupSize/);
  assert.throws(() => parseTabularTrainConfig({ loss: { clipHigh: -1 } }), /tabular\.loss\.clipHigh/);
  assert.throws(() => parseTabularTrainConfig({ loss: { lengthNorm: 'dr_grpo' } }), /tabular\.loss\.maxCompletionTokens/);
  assert.throws(() => parseTabularTrainConfig({ optimizer: { lr: -1 } }), /tabular\.optimizer\.lr/);
  assert.throws(() => parseTabularTrainConfig({ klBetaEndRatio: 2 }), /tabular\.klBetaEndRatio/);
});

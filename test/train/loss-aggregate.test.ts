/** Length normalisation, the combined RL loss and its metrics, and the SFT loss, against hand-worked numbers. */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { grad, initEngine, np, type Tensor } from '../../src/model/engine.ts';
import { parseLossConfig } from '../../src/train/loss-config.ts';
import { lengthNormWeights, maskedMean, weightedSum, type LengthNormOptions } from '../../src/train/loss-normalize.ts';
import { policyLoss } from '../../src/train/loss-rl.ts';
import { supervisedLoss } from '../../src/train/loss-sft.ts';
import { BATCH, lossInputs, near, scalar } from './loss-batch-fixture.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

async function normalised(perToken: number[][], mask: number[][], options: LengthNormOptions, lengths?: number[][]): Promise<number> {
  const w = lengthNormWeights(np.array(mask), options, lengths ? np.array(lengths) : undefined);
  return scalar(weightedSum(np.array(perToken), w));
}

// Row 0 has 3 trained tokens (1, 2, 3), row 1 one (10); 9s sit under the mask's zeros.
const LOSS = [
  [1, 2, 3, 9],
  [10, 9, 9, 9],
];
const MASK = [
  [1, 1, 1, 0],
  [1, 0, 0, 0],
];

test('length normalisation: dapo, grpo and dr_grpo by hand', async () => {
  near(await normalised(LOSS, MASK, { lengthNorm: 'dapo' }), (1 + 2 + 3 + 10) / 4, 1e-6, 'dapo'); // 4
  near(await normalised(LOSS, MASK, { lengthNorm: 'grpo' }), ((1 + 2 + 3) / 3 + 10 / 1) / 2, 1e-6, 'grpo'); // 6
  near(await normalised(LOSS, MASK, { lengthNorm: 'dr_grpo', maxCompletionTokens: 4 }), (6 + 10) / (4 * 2), 1e-6, 'dr_grpo'); // 2
});

test('length normalisation: an all-padding row does not count as a sequence; an empty batch gives 0', async () => {
  const loss = [...LOSS, [7, 7, 7, 7]];
  const mask = [...MASK, [0, 0, 0, 0]];
  near(await normalised(loss, mask, { lengthNorm: 'dapo' }), 4, 1e-6, 'dapo');
  near(await normalised(loss, mask, { lengthNorm: 'grpo' }), 6, 1e-6, 'grpo');
  near(await normalised(loss, mask, { lengthNorm: 'dr_grpo', maxCompletionTokens: 4 }), 2, 1e-6, 'dr_grpo');
  const none = [[0, 0, 0, 0]];
  for (const lengthNorm of ['dapo', 'grpo', 'dr_grpo'] as const) {
    near(await normalised([[5, 5, 5, 5]], none, { lengthNorm, maxCompletionTokens: 4 }), 0, 0, `${lengthNorm} empty`);
  }
});

test('length normalisation: packed rows use sequenceLengths', async () => {
  // One row, a 1-token sequence (loss 10) then a 2-token one (1, 3).
  const loss = [[9, 10, 1, 3]];
  const mask = [[0, 1, 1, 1]];
  const lengths = [[0, 1, 2, 2]];
  near(await normalised(loss, mask, { lengthNorm: 'grpo' }, lengths), (10 + (1 + 3) / 2) / 2, 1e-6, 'grpo'); // 6
  near(await normalised(loss, mask, { lengthNorm: 'dr_grpo', maxCompletionTokens: 4 }, lengths), 14 / (4 * 2), 1e-6, 'dr_grpo');
  near(await normalised(loss, mask, { lengthNorm: 'grpo' }), 14 / 3, 1e-6, 'grpo without lengths: one sequence per row');
});

test('maskedMean ignores masked values', async () => {
  near(await scalar(maskedMean(np.array(LOSS), np.array(MASK))), 4, 1e-6, 'maskedMean');
});

// A batch with an old policy different from the sampler, a reference, and entropies (grpo, β 0.1):
//   new − old = [[0.2, −0.1, ·], [−0.5, 0, −0.2]]  → r = [[1.221403, 0.904837], [0.606531, 1, 0.818731]]
//   old − sampling = [[0, 0.9, ·], [1, −0.3, 0.5]] → w = [[1, min(2.4596, 2) = 2], [2, 0.740818, 1.648721]]
//   ref − new = [[−0.1, 0, ·], [0, −0.1, 0.2]]     → k3 = [[0.004837, 0], [0, 0.004837, 0.021403]]
// PPO per token −min(r·A, clip(r)·A) with A = [[1, −1], [−1, 2, 0.5]]:
//   [[−1.221403, 0.904837], [0.8 (clipped low), −2, −0.409365]]
// policy (grpo) = ((−1.221403 + 2·0.904837)/2 + (2·0.8 − 0.740818·2 − 1.648721·0.409365)/3) / 2 = 0.054307
// kl (grpo) = 0.1 · ((0.004837 + 0)/2 + (0 + 0.004837 + 0.021403)/3) / 2 = 0.000558

function batchInputs(newLp: Tensor = np.array(BATCH.newLp)) {
  return lossInputs(BATCH, newLp);
}

test('policy loss: clipped PG with truncated IS and k3 KL, and every metric, by hand', async () => {
  const settings = parseLossConfig({ lengthNorm: 'grpo', klBeta: 0.1 });
  const [loss, m] = policyLoss(batchInputs(), settings);
  near(await scalar(loss), 0.05486532, 1e-6, 'loss');
  near(await scalar(m.policyLoss), 0.05430705, 1e-6, 'policyLoss');
  near(await scalar(m.klLoss), 0.00055827, 1e-7, 'klLoss');
  // token means over the 5 masked tokens
  near(await scalar(m.ratioMean), 0.9103003, 1e-6, 'ratioMean');
  near(await scalar(m.approxKl), 0.0303003, 1e-6, 'approxKl'); // mean of exp(x) − x − 1, x = new − old
  near(await scalar(m.refKl), 0.0062155, 1e-6, 'refKl');
  near(await scalar(m.entropy), 0.8, 1e-6, 'entropy');
  near(await scalar(m.isCappedShare), 0.4, 1e-7, 'isCappedShare');
  near(await scalar(m.isWeightMean), 1.4779079, 1e-6, 'isWeightMean');
  near(await scalar(m.clipFracLow), 0.2, 1e-7, 'clipFracLow');
  near(await scalar(m.clipFracHigh), 0, 0, 'clipFracHigh');
});

test('policy loss with the k2 estimator: β·½(ref − new)² in the loss, the k3 value as the refKl metric', async () => {
  const [loss, m] = policyLoss(batchInputs(), parseLossConfig({ lengthNorm: 'grpo', klBeta: 0.1, klEstimator: 'k2' }));
  // ½x² of ref − new = [[0.005, 0], [0, 0.005, 0.02]]: 0.1 · ((0.005 + 0)/2 + (0 + 0.005 + 0.02)/3) / 2 = 0.00054167
  near(await scalar(m.klLoss), 0.00054167, 1e-7, 'klLoss');
  near(await scalar(loss), 0.05430705 + 0.00054167, 1e-6, 'loss');
  near(await scalar(m.refKl), 0.0062155, 1e-6, 'refKl (k3 value, as with k3)');
});

test('policy loss: dapo and dr_grpo on the same batch; cispo; no old policy means no IS weight', async () => {
  const [dapo] = policyLoss({ ...batchInputs(), refLogprobs: undefined, entropy: undefined }, parseLossConfig({}));
  near(await scalar(dapo), 0.03170623 / 5, 1e-6, 'dapo: Σ w·ℓ over 5 tokens');
  const [dr] = policyLoss(batchInputs(), parseLossConfig({ lengthNorm: 'dr_grpo', maxCompletionTokens: 4 }));
  near(await scalar(dr), 0.03170623 / 8, 1e-6, 'dr_grpo: Σ w·ℓ / (4 · 2)');
  // CISPO per token −w_IS·clip(r)·A·log π = [[1.221403, 2·−0.452419], [2·−1.6, 0.740818·0.4, 1.648721·0.491238]]
  const [cispo] = policyLoss(batchInputs(), parseLossConfig({ policyLoss: 'cispo', lengthNorm: 'grpo' }));
  near(await scalar(cispo), -0.26981824, 1e-6, 'cispo (grpo)');
  // Without oldLogprobs the sampler is the anchor: r = exp(new − sampling), no weight.
  const { oldLogprobs, ...rest } = batchInputs();
  oldLogprobs!.dispose();
  const [onPolicy, m] = policyLoss(rest, parseLossConfig({ lengthNorm: 'dapo' }));
  // new − sampling = [[0.2, 0.8], [0.5, −0.3, 0.3]]; r = [1.221403, 2.225541, 1.648721, 0.740818, 1.349859]
  // −min(r·A, clip(r)·A) = [−1.221403, 2.225541, 1.648721, −1.481636, −0.64]  → mean 0.1062446
  near(await scalar(onPolicy), 0.1062446, 1e-6, 'on-policy dapo');
  near(await scalar(m.isCappedShare), 0, 0, 'isCappedShare');
  near(await scalar(m.clipFracHigh), 0.2, 1e-7, 'clipFracHigh (r 1.35 > 1.28 with A 0.5)');
  near(await scalar(m.clipFracLow), 0, 0, 'clipFracLow');
});

test('policy loss: gradient w.r.t. log π_new is w·(length weight)·(−r·A) on unclipped tokens, plus β·(1 − π_ref/π_new)', async () => {
  const settings = parseLossConfig({ lengthNorm: 'grpo', klBeta: 0.1 });
  const g = grad((lp: Tensor) => policyLoss(batchInputs(lp), settings)[0])(np.array(BATCH.newLp));
  const got = await g.data();
  // length weights (grpo): row 0 tokens 1/(2·2), row 1 tokens 1/(3·2)
  const lw = [0.25, 0.25, 0, 1 / 6, 1 / 6, 1 / 6];
  const ratio = [1.2214028, 0.9048374, 1, 0.6065307, 1, 0.8187308];
  const isW = [1, 2, 1, 2, 0.7408182, 1.6487213];
  const adv = [1, -1, 5, -1, 2, 0.5];
  const refMinusNew = [-0.1, 0, 0, 0, -0.1, 0.2];
  const clipped = [false, false, true, true, false, false]; // token 3 is padding, token 4 clipped low
  const expected = lw.map((w, i) => (clipped[i] ? 0 : w * isW[i] * -ratio[i] * adv[i]) + 0.1 * w * (1 - Math.exp(refMinusNew[i])));
  expected[2] = 0;
  for (let i = 0; i < expected.length; i++) near(got[i], expected[i], 1e-6, `d loss / d log π [${i}]`);
});

test('policy loss: β given as a step input replaces the configured β (a schedule without recompiling)', async () => {
  // Same batch as the hand-computed case: policy part 0.05430705, KL part 0.0055827 per unit β.
  const [loss, m] = policyLoss({ ...batchInputs(), klBeta: np.array(0.4) }, parseLossConfig({ lengthNorm: 'grpo', klBeta: 0.1 }));
  near(await scalar(m.klLoss), 0.4 * 0.0055827, 1e-7, 'klLoss at β 0.4');
  near(await scalar(loss), 0.05430705 + 0.4 * 0.0055827, 1e-6, 'loss at β 0.4');
  // A scheduled β also switches the KL on when the configured β is 0.
  const [, off] = policyLoss({ ...batchInputs(), klBeta: np.array(0.2) }, parseLossConfig({ lengthNorm: 'grpo' }));
  near(await scalar(off.klLoss), 0.2 * 0.0055827, 1e-7, 'klLoss at β 0.2 over a configured 0');
});

test('policy loss: the entropy bonus subtracts c · the length-normalised entropy, and its gradient is −c · the length weight', async () => {
  // grpo over the masked entropies: ((0.5 + 1.0)/2 + (1.5 + 0.25 + 0.75)/3) / 2 = 0.7916667
  const settings = parseLossConfig({ lengthNorm: 'grpo', klBeta: 0.1, entropyCoef: 0.01 });
  const [loss, m] = policyLoss(batchInputs(), settings);
  near(await scalar(m.entropyBonus), 0.007916667, 1e-8, 'entropyBonus');
  near(await scalar(loss), 0.05486532 - 0.007916667, 1e-6, 'loss = policy + KL − bonus');
  near(await scalar(m.entropy), 0.8, 1e-6, 'entropy (token mean, as without the bonus)');
  const g = grad((h: Tensor) => policyLoss({ ...batchInputs(), entropy: h }, settings)[0])(np.array(BATCH.entropy));
  const got = await g.data();
  [-0.0025, -0.0025, 0, -0.01 / 6, -0.01 / 6, -0.01 / 6].forEach((e, i) => near(got[i], e, 1e-8, `d loss / d H [${i}]`));
  // Without a coefficient there is no bonus and the entropy is only reported.
  const [, plain] = policyLoss(batchInputs(), parseLossConfig({ lengthNorm: 'grpo', klBeta: 0.1 }));
  assert.equal(plain.entropyBonus, undefined);
});

test('policy loss: entropyCoef > 0 without the entropy is an error', () => {
  assert.throws(() => {
    const { entropy, ...rest } = batchInputs();
    entropy!.dispose();
    policyLoss(rest, parseLossConfig({ entropyCoef: 0.01, klBeta: 0.1 }));
  }, /entropyCoef > 0 needs the per-token entropy/);
});

test('policy loss: klBeta > 0 without a reference is an error', () => {
  assert.throws(() => {
    const { refLogprobs, ...rest } = batchInputs();
    refLogprobs!.dispose();
    policyLoss(rest, parseLossConfig({ klBeta: 0.1 }));
  }, /klBeta > 0 needs refLogprobs/);
});

test('supervised loss: masked mean NLL', async () => {
  const [loss, m] = supervisedLoss(
    np.array([
      [-1, -2, -50],
      [-0.5, -3, -4],
    ]),
    np.array([
      [1, 1, 0],
      [0, 1, 1],
    ]),
  );
  near(await scalar(loss), (1 + 2 + 3 + 4) / 4, 1e-6, 'nll'); // 2.5
  near(await scalar(m.tokens), 4, 0, 'tokens');
  const g = grad((lp: Tensor) => supervisedLoss(lp, np.array([[1, 1, 0]]))[0])(np.array([[-1, -2, -3]]));
  const got = await g.data();
  [-0.5, -0.5, 0].forEach((e, i) => near(got[i], e, 1e-7, `d nll / d log π [${i}]`));
});

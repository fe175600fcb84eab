/**
 * Explored tokens (answers the trainer wrote, never sampled: explored-answers.ts): whatever their
 * recorded logprobs, their ratio and importance weight are 1 (anchored on π_new, no gradient through
 * the anchor) and they add nothing to the KL. So the loss and its gradient equal those of the same
 * batch with π_old, π_sampler and π_ref set to π_new's values at those tokens, and the KL metric is
 * the mean over the sampled tokens only.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine, type Tensor } from '../../src/model/engine.ts';
import { parseLossConfig, type LengthNorm } from '../../src/train/loss-config.ts';
import { BATCH, lossAt, lossInputs, near, type HostBatch } from './loss-batch-fixture.ts';

before(async () => {
  await initEngine({ threads: 1 });
});


// Row 0's first token and row 1's last are explored; their recorded logprobs are placeholders.
const EXPLORED = [
  [1, 0, 0],
  [0, 0, 1],
];
const WITH_PLACEHOLDERS: HostBatch = {
  ...BATCH,
  oldLp: BATCH.oldLp.map((r, i) => r.map((v, t) => (EXPLORED[i][t] ? 0 : v))),
  samplingLp: BATCH.samplingLp.map((r, i) => r.map((v, t) => (EXPLORED[i][t] ? 0 : v))),
  // Far from π_new, so a KL that counted them would show.
  refLp: BATCH.refLp.map((r, i) => r.map((v, t) => (EXPLORED[i][t] ? -0.01 : v))),
};
/** The same batch with every anchor equal to π_new's value at the explored tokens. */
const SELF_ANCHORED: HostBatch = {
  ...BATCH,
  oldLp: BATCH.oldLp.map((r, i) => r.map((v, t) => (EXPLORED[i][t] ? BATCH.newLp[i][t] : v))),
  samplingLp: BATCH.samplingLp.map((r, i) => r.map((v, t) => (EXPLORED[i][t] ? BATCH.newLp[i][t] : v))),
  refLp: BATCH.refLp.map((r, i) => r.map((v, t) => (EXPLORED[i][t] ? BATCH.newLp[i][t] : v))),
};

function evaluate(b: HostBatch, explored: boolean, lengthNorm: LengthNorm, offline: boolean) {
  const input = (lp: Tensor) => {
    const x = lossInputs(explored ? { ...b, explored: EXPLORED } : b, lp);
    if (!offline) {
      x.oldLogprobs!.dispose();
      delete x.oldLogprobs;
    }
    return x;
  };
  return lossAt(input, b.newLp, parseLossConfig({ lengthNorm, maxCompletionTokens: 4, klBeta: 0.1 }));
}

test('explored tokens: ratio 1 whatever their logprobs, no KL; loss, gradient and metrics by the self-anchored batch', async () => {
  for (const offline of [false, true]) {
    for (const lengthNorm of ['dapo', 'grpo', 'dr_grpo'] as const) {
      const label = `${offline ? 'with π_old' : 'sampler as π_old'}, ${lengthNorm}`;
      const e = await evaluate(WITH_PLACEHOLDERS, true, lengthNorm, offline);
      const s = await evaluate(SELF_ANCHORED, false, lengthNorm, offline);
      near(e.loss, s.loss, 1e-6, `${label}: loss`);
      e.grad.forEach((x, i) => near(x, s.grad[i], 1e-6, `${label}: d loss / d log π [${i}]`));
      // The explored tokens' gradient is the policy term's alone: at ratio 1 it is −A·(length weight) ≠ 0.
      assert.ok(Math.abs(e.grad[0]) > 1e-3 && Math.abs(e.grad[5]) > 1e-3, `${label}: explored tokens train`);
      for (const name of ['policyLoss', 'klLoss', 'clipFracLow', 'clipFracHigh', 'ratioMean', 'approxKl', 'isWeightMean', 'isCappedShare', 'entropy']) {
        near(e.metrics[name], s.metrics[name], 1e-6, `${label}: ${name}`);
      }
      // The KL's mean is over the 3 sampled tokens; the self-anchored batch averages the same sum over all 5.
      near(e.metrics.refKl, (s.metrics.refKl * 5) / 3, 1e-6, `${label}: refKl`);
    }
  }
});

test('without explored tokens the flag changes nothing', async () => {
  const settings = parseLossConfig({ klBeta: 0.1 });
  const plain = await lossAt((lp) => lossInputs(BATCH, lp), BATCH.newLp, settings);
  const flagged = await lossAt((lp) => lossInputs({ ...BATCH, explored: [[0, 0, 0], [0, 0, 0]] }, lp), BATCH.newLp, settings);
  near(flagged.loss, plain.loss, 1e-7, 'loss');
  flagged.grad.forEach((x, i) => near(x, plain.grad[i], 1e-7, `d loss / d log π [${i}]`));
  for (const [name, value] of Object.entries(plain.metrics)) near(flagged.metrics[name], value, 1e-7, name);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { parseLossConfig } from '../../src/train/loss-config.ts';

test('loss config: defaults are PPO clip 0.2 / 0.28, no KL, DAPO token mean, IS cap 2, no entropy bonus', () => {
  assert.deepEqual(parseLossConfig(undefined), {
    policyLoss: 'ppo_clip',
    clipLow: 0.2,
    clipHigh: 0.28,
    klBeta: 0,
    klEstimator: 'k3',
    klMax: null,
    lengthNorm: 'dapo',
    isCap: 2,
    entropyCoef: 0,
  });
  assert.equal(parseLossConfig({ policyLoss: 'cispo', clipLow: 5 }).clipLow, 5);
});

test('loss config: a bad field is a UsageError naming loss.<field>', () => {
  const cases: [unknown, RegExp][] = [
    [{ clipLow: -0.1 }, /loss\.clipLow: must be ≥ 0/],
    [{ clipLow: 1 }, /loss\.clipLow: must be < 1 with ppo_clip/],
    [{ klBeta: -1 }, /loss\.klBeta/],
    [{ klMax: 0 }, /loss\.klMax: must be > 0/],
    [{ klEstimator: 'k1' }, /loss\.klEstimator/],
    [{ lengthNorm: 'sum' }, /loss\.lengthNorm/],
    [{ lengthNorm: 'dr_grpo' }, /loss\.maxCompletionTokens: required when loss\.lengthNorm is "dr_grpo"/],
    [{ lengthNorm: 'dr_grpo', maxCompletionTokens: 0 }, /loss\.maxCompletionTokens: must be > 0/],
    [{ isCap: 0.5 }, /loss\.isCap: must be ≥ 1/],
    [{ entropyCoef: -0.01 }, /loss\.entropyCoef: must be ≥ 0/],
    [{ policyLoss: 'reinforce' }, /loss\.policyLoss/],
    [{ clip: 0.2 }, /loss: .*clip/],
  ];
  for (const [config, message] of cases) {
    assert.throws(() => parseLossConfig(config), (e: unknown) => e instanceof UsageError && message.test(e.message), JSON.stringify(config));
  }
});

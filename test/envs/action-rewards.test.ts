/** A dense env's action values looked up for sampled answers: by name and arguments, invalid ones at the penalty or below every legal one. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { invalidScore, sampledActionRewards } from '../../src/envs/action-rewards.ts';
import type { ActionValue } from '../../src/envs/env.ts';

describe('sampledActionRewards', () => {
  const values: ActionValue[] = [
    { action: { name: 'play', arguments: { move: 'hit' } }, expectedReward: -0.2 },
    { action: { name: 'play', arguments: { move: 'stick' } }, expectedReward: 0.1 },
    { action: { name: 'bet', arguments: { size: 1, odds: { num: 2, den: 1 } } }, expectedReward: 0.05 },
  ];

  it('looks each sampled action up by name and arguments; null scores the invalid penalty', () => {
    const r = sampledActionRewards(
      values,
      [
        { name: 'play', arguments: { move: 'hit' } },
        { name: 'play', arguments: { move: 'stick' } },
        null,
        { name: 'bet', arguments: { odds: { den: 1, num: 2 }, size: 1 } }, // key order differs at two depths
      ],
      -1,
    );
    assert.deepEqual(r, [-0.2, 0.1, -1, 0.05]);
  });

  it('scores an illegal answer below the worst legal action when the penalty would beat it', () => {
    // The worst legal action expects -0.2: a penalty of -0.1 would reward answering illegally.
    assert.deepEqual(sampledActionRewards(values, [null, { name: 'play', arguments: { move: 'hit' } }], -0.1), [-0.30000000000000004, -0.2]);
    assert.equal(invalidScore(-0.1, [-0.2, 0.1]), -0.2 - 0.1);
    assert.equal(invalidScore(0, [-0.2, 0.1]), -0.2); // no penalty: tied with the worst, never above it
    assert.equal(invalidScore(-0.2, [-0.2, 0.1]), -0.4); // a tie is not a floor: below it by the penalty
    assert.equal(invalidScore(-5, [-0.2, 0.1]), -5);
    assert.equal(invalidScore(-1, []), -1);
  });

  it('throws for a non-null action the env did not score, and for a bad env table', () => {
    assert.throws(() => sampledActionRewards(values, [{ name: 'play', arguments: { move: 'split' } }], -1), /sampled\.0: play\(\{"move":"split"\}\)/);
    assert.throws(
      () => sampledActionRewards([{ action: { name: 'a', arguments: {} }, expectedReward: NaN }], [], -1),
      /actionRewards\(\)\.0\.expectedReward/,
    );
    assert.throws(() => sampledActionRewards([values[0], values[0]], [], -1), /actionRewards\(\)\.1\.action: .* listed twice/);
  });
});

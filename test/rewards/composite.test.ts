import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { combineRewardParts, turnRewardParts } from '../../src/rewards/composite.ts';
import { formatReward } from '../../src/rewards/format.ts';
import { reasoningReward } from '../../src/rewards/reasoning.ts';
import { makeTurn } from './make-turn.ts';

describe('composite reward', () => {
  it('sums weighted parts; a part without a weight counts 1', () => {
    assert.equal(combineRewardParts({ pnl: 2, risk: -0.5, format: 1 }, { format: 0.2, pnl: 3 }), 6 - 0.5 + 0.2);
    assert.equal(combineRewardParts({ pnl: 2, risk: -0.5 }), 1.5);
    assert.equal(combineRewardParts({}, { pnl: 3 }), 0);
    assert.equal(combineRewardParts({ pnl: 1 }, { pnl: 0 }), 0);
    assert.throws(() => combineRewardParts({ pnl: NaN }), /reward part 'pnl' is not a finite number/);
    assert.throws(() => combineRewardParts({ pnl: 1 }, { pnl: Infinity }), /weight of reward part 'pnl'/);
  });

  it('adds the turn reward functions to the env parts and rejects name collisions', () => {
    const turn = makeTurn({ texts: ['<think>Sell BOLT, its outlook is negative now.</think>'], actions: [{ id: 'c', name: 'sell', arguments: { asset: 'BOLT', quantity: 3 } }] });
    turn.rewardParts = { pnl: 0.4, risk: -0.1 };
    const fns = [formatReward(), reasoningReward({ minWords: 3, maxWords: 50 })];
    const parts = turnRewardParts(turn, fns);
    assert.deepEqual(parts, { pnl: 0.4, risk: -0.1, format: 1, reasoning: 1 });
    const total = combineRewardParts(parts, { format: 0.2, reasoning: 0.2 });
    assert.ok(Math.abs(total - (0.4 - 0.1 + 0.2 + 0.2)) < 1e-12);
    assert.throws(() => turnRewardParts(turn, fns, { format: 1 }), /'format' collides/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computeAdvantages } from '../../src/advantage/compute.ts';
import { grpoAdvantages } from '../../src/advantage/grpo.ts';
import { treeAdvantages } from '../../src/advantage/tree.ts';
import type { ScoredGroup, ScoredSample } from '../../src/advantage/types.ts';
import { UsageError } from '../../src/core/errors.ts';
import { assertClose } from './close.ts';

/** A sample that saw `path`'s states and took its actions, earning `turnRewards` (total: their sum). */
function sample(id: string, path: [state: string, action: string][], turnRewards: number[]): ScoredSample {
  return {
    trajectoryId: id,
    reward: turnRewards.reduce((a, b) => a + b, 0),
    turnRewards,
    decisions: path.map(([state, action]) => ({ state, action })),
  };
}

// Blackjack with one deck for the group: two samples stick (−1); two hit, draw the same card, and
// then one sticks (+1) and one hits and busts (−1). Rewards [−1, −1, 1, −1]: mean −0.5, sample σ 1.
const deal: ScoredGroup = {
  groupId: 'seed-1',
  samples: [
    sample('stick-a', [['12 vs 10', 'stick']], [-1]),
    sample('stick-b', [['12 vs 10', 'stick']], [-1]),
    sample('hit-stick', [['12 vs 10', 'hit'], ['19 vs 10', 'stick']], [0, 1]),
    sample('hit-hit', [['12 vs 10', 'hit'], ['19 vs 10', 'hit']], [0, -1]),
  ],
};

describe('treeAdvantages', () => {
  it('judges each action by the mean return of the samples that took it at the same node', () => {
    const a = treeAdvantages([deal], { epsilon: 0 });
    // Root: stick mean −1, hit mean 0, node mean −0.5 → ∓0.5. After the hit: stick +1, hit −1, node 0 → ±1.
    assertClose(a[0].turnAdvantages, [-0.5]);
    assertClose(a[1].turnAdvantages, [-0.5]);
    assertClose(a[2].turnAdvantages, [0.5, 1]);
    assertClose(a[3].turnAdvantages, [0.5, -1]);
    // GRPO gives both turns of a sample the episode's advantage: the hit that led to a bust is blamed for the second hit.
    const g = grpoAdvantages([deal], { epsilon: 0 });
    assertClose(g[3].turnAdvantages, [-0.5, -0.5]);
  });

  it('gives 0 where every sample at a node acted alike, whatever their returns', () => {
    // Both hit, then drew different cards (different observations): no node holds two actions.
    const g: ScoredGroup = {
      groupId: 'g',
      samples: [sample('a', [['s', 'hit'], ['t', 'stick']], [0, 1]), sample('b', [['s', 'hit'], ['u', 'stick']], [0, -1])],
    };
    assert.deepEqual(
      treeAdvantages([g]).map((x) => x.turnAdvantages),
      [
        [0, 0],
        [0, 0],
      ],
    );
  });

  it('credits a turn with the return from that turn on, scaled by the std of the episode returns', () => {
    // Returns 1 and 3 (sample σ √2); the split is at turn 1, where the returns-to-go are 0 and 2 (mean 1).
    const g: ScoredGroup = {
      groupId: 'g',
      samples: [sample('a', [['s', 'x'], ['t', 'y']], [1, 0]), sample('b', [['s', 'x'], ['t', 'z']], [1, 2])],
    };
    const scaled = treeAdvantages([g], { epsilon: 0 });
    assertClose(scaled[0].turnAdvantages, [0, -Math.SQRT1_2]);
    assertClose(scaled[1].turnAdvantages, [0, Math.SQRT1_2]);
    const unscaled = treeAdvantages([g], { scale: 'none' });
    assertClose(unscaled[0].turnAdvantages, [0, -1]);
    assertClose(unscaled[1].turnAdvantages, [0, 1]);
  });

  it('tells nodes apart by the whole history, not the observation alone', () => {
    // Same observation 't' reached by different actions: two nodes with one action each.
    const g: ScoredGroup = {
      groupId: 'g',
      samples: [sample('a', [['s', 'x'], ['t', 'y']], [0, 1]), sample('b', [['s', 'w'], ['t', 'z']], [0, -1])],
    };
    const a = treeAdvantages([g], { epsilon: 0 });
    assertClose(a[0].turnAdvantages, [Math.SQRT1_2, 0]);
    assertClose(a[1].turnAdvantages, [-Math.SQRT1_2, 0]);
  });

  it('gives a tied group 0 everywhere', () => {
    const g: ScoredGroup = { groupId: 'g', samples: [sample('a', [['s', 'x']], [1]), sample('b', [['s', 'y']], [1])] };
    assert.deepEqual(treeAdvantages([g]).map((x) => x.turnAdvantages), [[0], [0]]);
  });

  it('is the estimator "tree" of computeAdvantages, and refuses samples without decisions', () => {
    const r = computeAdvantages([deal], { estimator: 'tree', epsilon: 0, dropZeroVariance: true });
    assertClose(r.advantages[2].turnAdvantages, [0.5, 1]);
    const bare: ScoredGroup = { groupId: 'g', samples: [{ trajectoryId: 'a', reward: 1 }, { trajectoryId: 'b', reward: 0 }] };
    assert.throws(() => treeAdvantages([bare]), /groups\.0\.samples\.0\.decisions must list the 1 turn/);
    assert.throws(() => computeAdvantages([deal], { estimator: 'tree', scale: 'batch' } as never), UsageError);
  });
});

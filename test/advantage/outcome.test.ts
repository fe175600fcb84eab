import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { outcomeAdvantages } from '../../src/advantage/outcome.ts';
import type { ScoredGroup } from '../../src/advantage/types.ts';
import { assertClose } from './close.ts';

// Four outcome-env episodes (different seeds, one per group) with returns [1, −1, 0, 0] and 3, 1, 2, 1 turns.
const episodes: ScoredGroup[] = [
  { groupId: 's1', samples: [{ trajectoryId: 'a', reward: 1, turnRewards: [0, 0, 1] }] },
  { groupId: 's2', samples: [{ trajectoryId: 'b', reward: -1, turnRewards: [-1] }] },
  { groupId: 's3', samples: [{ trajectoryId: 'c', reward: 0, turnRewards: [0, 0] }] },
  { groupId: 's4', samples: [{ trajectoryId: 'd', reward: 0 }] },
];

describe('outcomeAdvantages', () => {
  it('normalises each return over the batch and gives it to every turn', () => {
    // mean 0, Σd² = 2, sample σ = √(2/3): Â = ±1/√(2/3) = ±1.2247448714.
    const a = outcomeAdvantages(episodes, { epsilon: 0 });
    const s = 1.224744871391589;
    assertClose(a[0].turnAdvantages, [s, s, s]);
    assertClose(a[1].turnAdvantages, [-s]);
    assertClose(a[2].turnAdvantages, [0, 0]);
    assertClose(a[3].turnAdvantages, [0]);
    assert.deepEqual(
      a.map((t) => `${t.groupId}/${t.trajectoryId}`),
      ['s1/a', 's2/b', 's3/c', 's4/d'],
    );
  });

  it('ignores how episodes are grouped: the comparison set is the batch', () => {
    const merged: ScoredGroup[] = [{ groupId: 'all', samples: episodes.flatMap((g) => g.samples) }];
    const a = outcomeAdvantages(merged, { epsilon: 0 });
    const b = outcomeAdvantages(episodes, { epsilon: 0 });
    assert.deepEqual(
      a.map((t) => t.turnAdvantages),
      b.map((t) => t.turnAdvantages),
    );
  });

  it('uses ε: default 1e-4 added to σ', () => {
    const a = outcomeAdvantages(episodes);
    assertClose(a[0].turnAdvantages, [1, 1, 1].map(() => 1 / (Math.sqrt(2 / 3) + 1e-4)));
  });

  it('a batch of equal returns, or a single episode, gets 0 (not NaN)', () => {
    const tied: ScoredGroup[] = [
      { groupId: 'x', samples: [{ trajectoryId: 'x', reward: 0.7, turnRewards: [0.7, 0] }] },
      { groupId: 'y', samples: [{ trajectoryId: 'y', reward: 0.7 }] },
    ];
    assert.deepEqual(
      outcomeAdvantages(tied, { epsilon: 0 }).map((t) => t.turnAdvantages),
      [[0, 0], [0]],
    );
    assert.deepEqual(outcomeAdvantages([tied[0]], { epsilon: 0 })[0].turnAdvantages, [0, 0]);
  });
});

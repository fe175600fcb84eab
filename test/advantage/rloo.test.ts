import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../src/core/random.ts';
import { leaveOneOut, rlooAdvantages } from '../../src/advantage/rloo.ts';
import type { ScoredGroup } from '../../src/advantage/types.ts';
import { assertClose, firstTurns } from './close.ts';

function group(groupId: string, rewards: number[]): ScoredGroup {
  return { groupId, samples: rewards.map((reward, i) => ({ trajectoryId: `${groupId}-${i}`, reward })) };
}

describe('rlooAdvantages', () => {
  it('A_i = r_i − mean of the others', () => {
    // [3, 1, 2]: 3 − (1+2)/2 = 1.5; 1 − (3+2)/2 = −1.5; 2 − (3+1)/2 = 0.
    assertClose(firstTurns(rlooAdvantages([group('g', [3, 1, 2])])), [1.5, -1.5, 0]);
    // [1, 0, 0, 0]: 1 − 0 = 1; 0 − 1/3 each.
    assertClose(firstTurns(rlooAdvantages([group('g', [1, 0, 0, 0])])), [1, -1 / 3, -1 / 3, -1 / 3]);
    // Two samples: each against the other.
    assertClose(firstTurns(rlooAdvantages([group('g', [5, 2])])), [3, -3]);
  });

  it('equals G/(G−1)·(r_i − mean) on random groups', () => {
    const rng = new Rng(7);
    for (let trial = 0; trial < 50; trial++) {
      const G = 2 + rng.int(7);
      const r = Array.from({ length: G }, () => rng.normal() * 3);
      const mu = r.reduce((a, b) => a + b, 0) / G;
      assertClose(
        leaveOneOut(r),
        r.map((ri) => (G / (G - 1)) * (ri - mu)),
        1e-9,
      );
    }
  });

  it('gives 0 to a group of one and to a tied group, never NaN', () => {
    const a = rlooAdvantages([group('solo', [4]), group('tie', [0.7, 0.7, 0.7]), group('live', [1, 0])]);
    assert.deepEqual(firstTurns(a).slice(0, 4), [0, 0, 0, 0]);
    assertClose(firstTurns(a).slice(4), [1, -1]);
  });

  it('groups are independent: each baseline only sees its own group', () => {
    const a = rlooAdvantages([group('a', [3, 1, 2]), group('b', [100, 0])]);
    assertClose(firstTurns(a), [1.5, -1.5, 0, 100, -100]);
  });

  it('broadcasts to every turn', () => {
    const a = rlooAdvantages([
      {
        groupId: 'g',
        samples: [
          { trajectoryId: 'x', reward: 2, turnRewards: [1, 1] },
          { trajectoryId: 'y', reward: 0, turnRewards: [0, 0, 0] },
        ],
      },
    ]);
    assert.deepEqual(a[0].turnAdvantages, [2, 2]);
    assert.deepEqual(a[1].turnAdvantages, [-2, -2, -2]);
  });

  it('rejects a NaN reward, naming the field', () => {
    assert.throws(() => rlooAdvantages([group('g', [NaN, 1])]), /groups\.0\.samples\.0\.reward/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { advantageStats, clip, dropZeroVarianceGroups, whiten } from '../../src/advantage/normalize.ts';
import type { ScoredGroup, TrajectoryAdvantages } from '../../src/advantage/types.ts';
import { assertClose } from './close.ts';

function group(groupId: string, rewards: number[]): ScoredGroup {
  return { groupId, samples: rewards.map((reward, i) => ({ trajectoryId: `${groupId}-${i}`, reward })) };
}

// Turn advantages [1, 2] [3] [6]: mean 3, Σd² = 14, population σ = √3.5.
const advantages: TrajectoryAdvantages[] = [
  { trajectoryId: 'a', groupId: 'g', turnAdvantages: [1, 2] },
  { trajectoryId: 'b', groupId: 'g', turnAdvantages: [3] },
  { trajectoryId: 'c', groupId: 'h', turnAdvantages: [6] },
];

describe('whiten', () => {
  it('A′ = (A − mean) / (σ + ε) over every turn of the batch, shape and ids kept', () => {
    const w = whiten(advantages, 0);
    assert.deepEqual(
      w.map((t) => [t.trajectoryId, t.groupId, t.turnAdvantages.length]),
      [
        ['a', 'g', 2],
        ['b', 'g', 1],
        ['c', 'h', 1],
      ],
    );
    assertClose(
      w.flatMap((t) => t.turnAdvantages),
      [-1.0690449676496976, -0.5345224838248488, 0, 1.6035674514745464],
    );
    assert.deepEqual(advantages[0].turnAdvantages, [1, 2], 'input left unchanged');
  });

  it('equal advantages whiten to 0, not NaN', () => {
    const w = whiten([{ trajectoryId: 'a', groupId: 'g', turnAdvantages: [0.1, 0.1, 0.1] }], 0);
    assert.deepEqual(w[0].turnAdvantages, [0, 0, 0]);
    assert.deepEqual(whiten([], 0), []);
  });
});

describe('clip', () => {
  it('clamps to [−limit, limit]', () => {
    const c = clip(whiten(advantages, 0), 1);
    assertClose(
      c.flatMap((t) => t.turnAdvantages),
      [-1, -0.5345224838248488, 0, 1],
    );
    assert.throws(() => clip(advantages, 0), /clip limit must be > 0/);
  });
});

describe('zero-variance groups', () => {
  const groups = [group('tied', [1, 1]), group('live', [0, 1]), group('solo', [2]), group('float-tied', [0.1 + 0.2, 0.3])];

  it('drops tied and single-sample groups and says which', () => {
    const { kept, dropped } = dropZeroVarianceGroups(groups);
    assert.deepEqual(
      kept.map((g) => g.groupId),
      ['live'],
    );
    assert.deepEqual(dropped, ['tied', 'solo', 'float-tied']);
  });

  it('stats count them, and summarise the advantages', () => {
    const s = advantageStats([1, 2, 3, 6], groups, ['tied']);
    assert.equal(s.mean, 3);
    assertClose([s.std], [Math.sqrt(3.5)]);
    assert.deepEqual(
      { min: s.min, max: s.max, count: s.count, groups: s.groups, zero: s.zeroVarianceGroups, single: s.singletonGroups, dropped: s.droppedGroups },
      { min: 1, max: 6, count: 4, groups: 4, zero: 3, single: 1, dropped: 1 },
    );
  });

  it('stats of nothing are zeros, not NaN or ±Infinity', () => {
    assert.deepEqual(advantageStats([], []), {
      mean: 0,
      std: 0,
      min: 0,
      max: 0,
      count: 0,
      groups: 0,
      zeroVarianceGroups: 0,
      singletonGroups: 0,
      droppedGroups: 0,
    });
  });
});

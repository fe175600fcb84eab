import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { grpoAdvantages } from '../../src/advantage/grpo.ts';
import type { ScoredGroup } from '../../src/advantage/types.ts';
import { assertClose, firstTurns } from './close.ts';

/** One group of one-turn trajectories with these rewards. */
function group(groupId: string, rewards: number[]): ScoredGroup {
  return { groupId, samples: rewards.map((reward, i) => ({ trajectoryId: `${groupId}-${i}`, reward })) };
}

describe('grpoAdvantages', () => {
  // Rewards [1, 2, 3, 6]: mean 3, deviations [−2, −1, 0, 3], Σd² = 14.
  it("scale 'group', sample std: A = (r − 3) / √(14/3)", () => {
    const a = grpoAdvantages([group('g', [1, 2, 3, 6])], { epsilon: 0 });
    // √(14/3) = 2.1602468995
    assertClose(firstTurns(a), [-0.9258200997725514, -0.4629100498862757, 0, 1.3887301496588271]);
  });

  it("std 'population' divides by n: A = (r − 3) / √(14/4)", () => {
    const a = grpoAdvantages([group('g', [1, 2, 3, 6])], { epsilon: 0, std: 'population' });
    assertClose(firstTurns(a), [-1.0690449676496976, -0.5345224838248488, 0, 1.6035674514745464]);
  });

  it('adds ε to σ (not to the variance), default ε = 1e-4', () => {
    // Rewards [0, 1]: mean 0.5, sample σ = √0.5.
    assertClose(firstTurns(grpoAdvantages([group('g', [0, 1])])), [-0.7070067953266834, 0.7070067953266834]);
    assertClose(firstTurns(grpoAdvantages([group('g', [0, 1])], { epsilon: 0 })), [-Math.SQRT1_2, Math.SQRT1_2]);
    // A large ε shrinks toward 0: 0.5 / (√0.5 + 1000).
    assertClose(firstTurns(grpoAdvantages([group('g', [0, 1])], { epsilon: 1000 })), [-0.5 / (Math.SQRT1_2 + 1000), 0.5 / (Math.SQRT1_2 + 1000)]);
  });

  // Groups [0, 2] and [1, 1, 4]: group means 1 and 2. Batch [0, 2, 1, 1, 4]: mean 1.6, Σd² = 9.2, sample σ = √2.3.
  it("scale 'batch': group mean, batch σ", () => {
    const a = grpoAdvantages([group('a', [0, 2]), group('b', [1, 1, 4])], { scale: 'batch', epsilon: 0 });
    const s = 0.6593804733957871; // 1 / √2.3
    assertClose(firstTurns(a), [-s, s, -s, -s, 2 * s]);
  });

  it("scale 'none' (Dr. GRPO): A = r − group mean, ε unused", () => {
    const a = grpoAdvantages([group('a', [0, 2]), group('b', [1, 1, 4])], { scale: 'none', epsilon: 5 });
    assertClose(firstTurns(a), [-1, 1, -1, -1, 2]);
  });

  it('gives exactly 0 to a tied group, even with ε = 0 and float-noisy means', () => {
    // mean([0.1, 0.1, 0.1]) = 0.10000000000000002 and σ ≈ 1.7e-17: naive (r − μ)/σ gives −0.816 each.
    for (const scale of ['group', 'batch', 'none'] as const) {
      const a = grpoAdvantages([group('t', [0.1, 0.1, 0.1]), group('u', [0.3, 0.3, 0.3, 0.3, 0.3])], { scale, epsilon: 0 });
      assert.deepEqual(firstTurns(a), [0, 0, 0, 0, 0, 0, 0, 0], scale);
    }
  });

  it('treats rewards equal up to float rounding as tied', () => {
    const a = grpoAdvantages([group('t', [0.1 + 0.2, 0.3])], { epsilon: 0 });
    assert.deepEqual(firstTurns(a), [0, 0]);
  });

  it('gives 0 (never NaN) to a group of one, in every scale', () => {
    for (const scale of ['group', 'batch', 'none'] as const) {
      const a = grpoAdvantages([group('solo', [7])], { scale, epsilon: 0 });
      assert.deepEqual(firstTurns(a), [0], scale);
    }
  });

  it('a tied group keeps 0 while another group in the batch is scaled', () => {
    const a = grpoAdvantages([group('t', [1, 1]), group('v', [0, 1])], { epsilon: 0 });
    assertClose(firstTurns(a), [0, 0, -Math.SQRT1_2, Math.SQRT1_2]);
  });

  it("applies the episode's advantage to every turn, with ids kept", () => {
    const a = grpoAdvantages(
      [
        {
          groupId: 'g',
          samples: [
            { trajectoryId: 'x', reward: 1, turnRewards: [0, 0, 1] },
            { trajectoryId: 'y', reward: 0, turnRewards: [0] },
          ],
        },
      ],
      { epsilon: 0 },
    );
    assert.deepEqual(
      a.map((t) => [t.trajectoryId, t.groupId, t.turnAdvantages.length]),
      [
        ['x', 'g', 3],
        ['y', 'g', 1],
      ],
    );
    assertClose(a[0].turnAdvantages, [Math.SQRT1_2, Math.SQRT1_2, Math.SQRT1_2]);
    assertClose(a[1].turnAdvantages, [-Math.SQRT1_2]);
  });

  it('rejects non-finite rewards, duplicate ids and empty groups, naming the field', () => {
    assert.throws(() => grpoAdvantages([group('g', [1, NaN])]), /groups\.0\.samples\.1\.reward/);
    assert.throws(() => grpoAdvantages([group('g', [1, Infinity])]), /groups\.0\.samples\.1\.reward/);
    assert.throws(
      () => grpoAdvantages([group('g', [1]), { groupId: 'h', samples: [{ trajectoryId: 'g-0', reward: 2 }] }]),
      /groups\.1\.samples\.0\.trajectoryId: 'g-0' appears twice/,
    );
    assert.throws(() => grpoAdvantages([group('g', [1]), group('g', [2])]), /groups\.1\.groupId/);
    assert.throws(() => grpoAdvantages([{ groupId: 'e', samples: [] }]), /groups\.0\.samples: a group needs at least one sample/);
    assert.throws(
      () => grpoAdvantages([{ groupId: 'g', samples: [{ trajectoryId: 'x', reward: 1, turnRewards: [1, NaN] }] }]),
      /groups\.0\.samples\.0\.turnRewards\.1/,
    );
  });

  it('rejects bad options as a UsageError naming grpo.<field>', () => {
    assert.throws(() => grpoAdvantages([group('g', [0, 1])], { epsilon: -1 }), (e: unknown) => {
      return e instanceof UsageError && /grpo\.epsilon/.test(e.message);
    });
    // @ts-expect-error: not a scale
    assert.throws(() => grpoAdvantages([group('g', [0, 1])], { scale: 'per-token' }), /grpo\.scale/);
    // @ts-expect-error: unknown option (a typo must not pass silently)
    assert.throws(() => grpoAdvantages([group('g', [0, 1])], { epsilom: 0 }), /Unrecognized key: "epsilom"/);
  });
});

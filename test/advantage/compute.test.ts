import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { computeAdvantages } from '../../src/advantage/compute.ts';
import type { ScoredGroup } from '../../src/advantage/types.ts';
import { assertClose, firstTurns } from './close.ts';

function group(groupId: string, rewards: number[]): ScoredGroup {
  return { groupId, samples: rewards.map((reward, i) => ({ trajectoryId: `${groupId}-${i}`, reward })) };
}

const groups = [group('tied', [1, 1, 1]), group('a', [0, 2]), group('b', [1, 1, 4]), group('solo', [5])];

describe('computeAdvantages', () => {
  it('grpo without post-processing: every trajectory, tied and single groups at 0, counted', () => {
    const r = computeAdvantages(groups, { estimator: 'grpo', scale: 'none' });
    assertClose(firstTurns(r.advantages), [0, 0, 0, -1, 1, -1, -1, 2, 0]);
    assert.deepEqual(r.dropped, []);
    assert.equal(r.stats.groups, 4);
    assert.equal(r.stats.zeroVarianceGroups, 2);
    assert.equal(r.stats.singletonGroups, 1);
    assert.equal(r.stats.count, 9);
  });

  it('dropZeroVariance removes those groups before the estimator, so batch σ only sees the rest', () => {
    const r = computeAdvantages(groups, { estimator: 'grpo', scale: 'batch', epsilon: 0, dropZeroVariance: true });
    assert.deepEqual(r.dropped, ['tied', 'solo']);
    assert.deepEqual(
      r.advantages.map((a) => a.trajectoryId),
      ['a-0', 'a-1', 'b-0', 'b-1', 'b-2'],
    );
    // Kept batch [0, 2, 1, 1, 4]: sample σ = √2.3 (see grpo.test.ts).
    const s = 0.6593804733957871;
    assertClose(firstTurns(r.advantages), [-s, s, -s, -s, 2 * s]);
    assert.equal(r.stats.groups, 4);
    assert.equal(r.stats.droppedGroups, 2);
  });

  it('whitens, then clips, and reports stats of the final values', () => {
    // Dr. GRPO advantages of the kept groups: [−1, 1, −1, −1, 2]; mean 0, population σ = √(8/5).
    const r = computeAdvantages(groups, {
      estimator: 'grpo',
      scale: 'none',
      dropZeroVariance: true,
      whiten: true,
      whitenEpsilon: 0,
      clip: 1.5,
    });
    const z = 1 / Math.sqrt(1.6); // 0.790569
    assertClose(firstTurns(r.advantages), [-z, z, -z, -z, 1.5]);
    assertClose([r.stats.min, r.stats.max, r.stats.mean], [-z, 1.5, (-2 * z + 1.5) / 5]);
  });

  it('dispatches rloo, outcome and gae', () => {
    const live = [group('a', [0, 2]), group('b', [1, 1, 4])];
    assertClose(firstTurns(computeAdvantages(live, { estimator: 'rloo' }).advantages), [-2, 2, -1.5, -1.5, 3]);
    // Outcome: batch [0, 2, 1, 1, 4], mean 1.6, sample σ = √2.3.
    const s = Math.sqrt(2.3);
    assertClose(
      firstTurns(computeAdvantages(live, { estimator: 'outcome', epsilon: 0 }).advantages),
      [0, 2, 1, 1, 4].map((x) => (x - 1.6) / s),
    );
    // GAE, one turn each, γ = λ = 1: return − batch mean.
    assertClose(
      firstTurns(computeAdvantages(live, { estimator: 'gae' }).advantages),
      [0, 2, 1, 1, 4].map((x) => x - 1.6),
    );
    const withValues = computeAdvantages([group('a', [0, 2])], { estimator: 'gae' }, { values: { 'a-0': [0.5], 'a-1': [0.5] } });
    assertClose(firstTurns(withValues.advantages), [-0.5, 1.5]);
  });

  it('all groups dropped: no advantages, no NaN in stats', () => {
    const r = computeAdvantages([group('t', [1, 1])], { estimator: 'grpo', dropZeroVariance: true, whiten: true });
    assert.deepEqual(r.advantages, []);
    assert.deepEqual(r.dropped, ['t']);
    assert.ok(Object.values(r.stats).every(Number.isFinite));
  });

  it('rejects bad config with a UsageError naming the field, and values for a non-gae estimator', () => {
    const usage = (pattern: RegExp) => (e: unknown) => e instanceof UsageError && pattern.test(e.message);
    // @ts-expect-error: not an estimator
    assert.throws(() => computeAdvantages(groups, { estimator: 'ppo' }), usage(/advantage\.estimator/));
    assert.throws(() => computeAdvantages(groups, { estimator: 'grpo', clip: -1 }), usage(/advantage\.clip: must be > 0/));
    // @ts-expect-error: gamma belongs to gae
    assert.throws(() => computeAdvantages(groups, { estimator: 'grpo', gamma: 0.9 }), usage(/Unrecognized key: "gamma"/));
    assert.throws(() => computeAdvantages(groups, { estimator: 'rloo' }, { values: {} }), /values are only used by the gae estimator/);
  });
});

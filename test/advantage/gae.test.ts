import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { Rng } from '../../src/core/random.ts';
import { gae, gaeAdvantages, returnsToGo, turnIndexBaseline } from '../../src/advantage/gae.ts';
import type { ScoredGroup } from '../../src/advantage/types.ts';
import { assertClose } from './close.ts';

/** A batch from per-turn rewards: each inner list is one trajectory. */
function batch(...groups: number[][][]): ScoredGroup[] {
  return groups.map((trajectories, g) => ({
    groupId: `g${g}`,
    samples: trajectories.map((turnRewards, i) => ({
      trajectoryId: `g${g}-${i}`,
      reward: turnRewards.reduce((a, b) => a + b, 0),
      turnRewards,
    })),
  }));
}

describe('returnsToGo and turnIndexBaseline', () => {
  it('G_t = r_t + γ G_{t+1}', () => {
    // [1, 0, 2], γ = 0.5: G_2 = 2, G_1 = 0 + 0.5·2 = 1, G_0 = 1 + 0.5·1 = 1.5.
    assertClose(returnsToGo([1, 0, 2], 0.5), [1.5, 1, 2]);
    assert.deepEqual(returnsToGo([], 0.9), []);
  });

  it('b_k averages G_k over the trajectories that reach turn k', () => {
    // γ = 1: [1, 0, 2] → G = [3, 2, 2]; [0, 1] → G = [1, 1]; b = [(3+1)/2, (2+1)/2, 2/1].
    assertClose(turnIndexBaseline(batch([[1, 0, 2]], [[0, 1]]), 1), [2, 1.5, 2]);
  });
});

describe('gae', () => {
  it('matches a hand computation with γ = 0.9, λ = 0.8', () => {
    // r = [1, 0, 2], V = [0.5, 1, 1.5], V_3 = 0:
    // δ_2 = 2 − 1.5 = 0.5; δ_1 = 0 + 0.9·1.5 − 1 = 0.35; δ_0 = 1 + 0.9·1 − 0.5 = 1.4
    // A_2 = 0.5; A_1 = 0.35 + 0.72·0.5 = 0.71; A_0 = 1.4 + 0.72·0.71 = 1.9112
    assertClose(gae([1, 0, 2], [0.5, 1, 1.5], 0.9, 0.8), [1.9112, 0.71, 0.5]);
  });

  it('bootstraps from a (T+1)-th value for a cut-off episode', () => {
    // V_3 = 2: δ_2 = 2 + 0.9·2 − 1.5 = 2.3; A_1 = 0.35 + 0.72·2.3 = 2.006; A_0 = 1.4 + 0.72·2.006 = 2.84432
    assertClose(gae([1, 0, 2], [0.5, 1, 1.5, 2], 0.9, 0.8), [2.84432, 2.006, 2.3]);
  });

  it('λ = 0 gives the one-step TD errors', () => {
    assertClose(gae([1, 0, 2], [0.5, 1, 1.5], 0.9, 0), [1.4, 0.35, 0.5]);
  });
});

describe('gaeAdvantages', () => {
  it('γ = λ = 1 with the turn-index baseline reduces to return − baseline (hand values)', () => {
    // G = [3, 2, 2] and [1, 1]; b = [2, 1.5, 2] → [1, 0.5, 0] and [−1, −0.5].
    const a = gaeAdvantages(batch([[1, 0, 2]], [[0, 1]]));
    assertClose(a[0].turnAdvantages, [1, 0.5, 0]);
    assertClose(a[1].turnAdvantages, [-1, -0.5]);
  });

  it('γ = λ = 1 with V = baseline: A_t = G_t − b_t on random batches of uneven lengths', () => {
    const rng = new Rng(11);
    for (let trial = 0; trial < 30; trial++) {
      const groups = Array.from({ length: 1 + rng.int(3) }, () =>
        Array.from({ length: 1 + rng.int(4) }, () => Array.from({ length: 1 + rng.int(6) }, () => rng.normal())),
      );
      const input = batch(...groups);
      const b = turnIndexBaseline(input, 1);
      const a = gaeAdvantages(input, { gamma: 1, lambda: 1 });
      input.flatMap((g) => g.samples).forEach((sample, i) => {
        const G = returnsToGo(sample.turnRewards!, 1);
        assertClose(a[i].turnAdvantages, G.map((g, t) => g - b[t]), 1e-9);
      });
    }
  });

  it('λ = 1 with any γ telescopes to G_t − V_t for given values', () => {
    const values = { 'g0-0': [0.3, -0.2, 1.1] };
    const a = gaeAdvantages(batch([[1, 0, 2]]), { gamma: 0.9, lambda: 1 }, values);
    const G = returnsToGo([1, 0, 2], 0.9); // [2.62, 1.8, 2]
    assertClose(a[0].turnAdvantages, G.map((g, t) => g - values['g0-0'][t]));
  });

  it("never uses a trajectory's own return as its value (the seed 000 bug)", () => {
    const input = batch([[1, 0, 2], [0, 0, 0]]);
    // The trap, shown with explicit values: V_t = own G_t zeroes every TD error and every advantage.
    const own = { 'g0-0': returnsToGo([1, 0, 2], 0.99), 'g0-1': returnsToGo([0, 0, 0], 0.99) };
    const trapped = gaeAdvantages(input, { gamma: 0.99, lambda: 0.95 }, own);
    assert.ok(trapped.every((t) => t.turnAdvantages.every((x) => Math.abs(x) < 1e-12)));
    // The default value is the batch's turn-index baseline: the better episode gets positive credit
    // at every turn and the worse one negative.
    const a = gaeAdvantages(input, { gamma: 0.99, lambda: 0.95 });
    assert.ok(a[0].turnAdvantages.every((x) => x > 0.1), `better: ${a[0].turnAdvantages}`);
    assert.ok(a[1].turnAdvantages.every((x) => x < -0.1), `worse: ${a[1].turnAdvantages}`);
  });

  it('a one-turn sample without turnRewards uses its reward', () => {
    const a = gaeAdvantages([
      {
        groupId: 'g',
        samples: [
          { trajectoryId: 'x', reward: 3 },
          { trajectoryId: 'y', reward: 1 },
        ],
      },
    ]);
    assertClose(a.map((t) => t.turnAdvantages[0]), [1, -1]);
  });

  it('checks given values: every trajectory, T or T+1 of them, finite', () => {
    const input = batch([[1, 0, 2], [0, 1]]);
    assert.throws(() => gaeAdvantages(input, {}, { 'g0-0': [0, 0, 0] }), /values\['g0-1'\]: missing/);
    assert.throws(
      () => gaeAdvantages(input, {}, { 'g0-0': [0, 0], 'g0-1': [0, 0] }),
      /values\['g0-0'\]: has 2 values; expected 3 .* or 4/,
    );
    assert.throws(() => gaeAdvantages(input, {}, { 'g0-0': [0, NaN, 0], 'g0-1': [0, 0] }), /values\['g0-0'\]\.1/);
  });

  it('rejects γ or λ outside [0, 1] as a UsageError', () => {
    assert.throws(
      () => gaeAdvantages(batch([[1]]), { gamma: 1.5 }),
      (e: unknown) => e instanceof UsageError && /gae\.gamma: must be in \[0, 1\]/.test(e.message),
    );
    assert.throws(() => gaeAdvantages(batch([[1]]), { lambda: -0.1 }), /gae\.lambda/);
  });
});

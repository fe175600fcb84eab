/** Identical training samples merged into one weighted sample; anything the loss reads keeps them apart. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LayoutSample } from '../../src/train/rl-batch.ts';
import { mergeIdenticalSamples } from '../../src/train/samples-merge.ts';
import { buildSamples } from '../../src/train/samples.ts';
import type { TrainingSample } from '../../src/train/samples-types.ts';
import { call, EOT, trajectory } from './samples-fixtures.ts';

/**
 * A group of five one-turn episodes from the same prompt: t1, t2 and t4 sampled [10 EOT] (t4 with
 * slightly different logprobs: float noise), t3 sampled [11 EOT], t5 [10 EOT] under policy version 2.
 */
function groupSamples(advantages: number[] = [0.5, 0.5, -1, 0.5, 0.5]): TrainingSample[] {
  const prompt = [1, 2, 3];
  const episodes = [
    { ids: [10, EOT], logprobs: [-0.5, -0.1] },
    { ids: [10, EOT], logprobs: [-0.5, -0.1] },
    { ids: [11, EOT], logprobs: [-1.5, -0.1] },
    { ids: [10, EOT], logprobs: [-0.5000001, -0.1] },
    { ids: [10, EOT], logprobs: [-0.5, -0.1], policyVersion: 2 },
  ];
  const trajectories = episodes.map((e, i) => trajectory(`t${i + 1}`, [[call({ prompt, ...e })]]));
  const { samples } = buildSamples(
    trajectories,
    trajectories.map((t, i) => ({ trajectoryId: t.id, groupId: 'g1', turnAdvantages: [advantages[i]] })),
  );
  assert.equal(samples.length, 5);
  return samples;
}

test('identical samples merge into the first, weighted by their count, order kept', () => {
  const samples = groupSamples();
  const { samples: out, merged } = mergeIdenticalSamples(samples);
  assert.equal(merged, 2);
  assert.deepEqual(out.map((s) => s.trajectoryId), ['t1', 't3', 't5']);
  assert.deepEqual(out.map((s) => s.weight ?? 1), [3, 1, 1]);
  // The first occurrence's data (its logprobs too), the inputs untouched.
  assert.deepEqual(out[0].logprobs, samples[0].logprobs);
  assert.equal(samples[0].weight, undefined);
  assert.equal(out[1], samples[2], 'an unmerged sample is returned as given');
  // Merging again changes nothing; weights already there add up.
  const again = mergeIdenticalSamples(out);
  assert.equal(again.merged, 0);
  assert.deepEqual(again.samples.map((s) => s.weight ?? 1), [3, 1, 1]);
  const twice = mergeIdenticalSamples([out[0], { ...samples[1], weight: 2 }]);
  assert.deepEqual([twice.merged, twice.samples[0].weight], [1, 5]);
});

test('different advantages, tokens, mask, policy versions or sampled-or-explored do not merge', () => {
  // t2 now has another advantage than t1 (t4 still matches t1).
  const byAdvantage = mergeIdenticalSamples(groupSamples([0.5, 0.25, -1, 0.5, 0.5]));
  assert.deepEqual(byAdvantage.samples.map((s) => [s.trajectoryId, s.weight ?? 1]), [['t1', 2], ['t2', 1], ['t3', 1], ['t5', 1]]);

  const [base] = groupSamples();
  const variants: [string, TrainingSample][] = [
    ['tokens', { ...base, tokens: [...base.tokens.slice(0, -1), 98] }],
    ['lossMask', { ...base, lossMask: base.lossMask.map((m, i) => (i === 3 ? 0 : m)) }],
    ['advantages', { ...base, advantages: base.advantages.map((a) => (a ? a + 1e-9 : a)) }],
    ['sample policyVersion', { ...base, policyVersion: base.policyVersion + 1 }],
    ['span policyVersion', { ...base, spans: base.spans.map((s) => ({ ...s, policyVersion: s.policyVersion + 1 })) }],
    ['explored', { ...base, explored: true }],
  ];
  for (const [what, variant] of variants) {
    const { samples, merged } = mergeIdenticalSamples([base, variant]);
    assert.equal(merged, 0, what);
    assert.deepEqual(samples, [base, variant], what);
  }
  // Fields the loss does not read (ids, group, score) do not keep samples apart.
  const other = { ...base, id: 'x:0.0', trajectoryId: 'x', groupId: 'g2', score: -3 };
  assert.deepEqual(mergeIdenticalSamples([base, other]).samples.map((s) => s.weight), [2]);
});

test('samples with an sftMask are never merged', () => {
  const [base] = groupSamples();
  const sft: TrainingSample & LayoutSample = { ...base, sftMask: base.lossMask.map(() => 0) };
  const { samples, merged } = mergeIdenticalSamples([sft, { ...sft }, base, sft]);
  assert.equal(merged, 0);
  assert.equal(samples.length, 4);
  assert.ok(samples.every((s) => s.weight === undefined));
  assert.deepEqual(mergeIdenticalSamples([]), { samples: [], merged: 0 });
});

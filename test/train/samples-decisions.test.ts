/** Samples from per-decision advantages: one per scored completion, exact ids, its decision's advantage; untrainable calls counted. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Completion } from '../../src/core/completion.ts';
import type { Trajectory, Turn } from '../../src/core/trajectory.ts';
import { buildDecisionSamples } from '../../src/train/samples-decisions.ts';

const completion = (ids: number[] | null): Completion => ({
  text: 'x',
  promptTokenIds: [7, 8, 9],
  completionTokenIds: ids,
  logprobs: ids ? ids.map((_, i) => -0.1 * (i + 1)) : null,
  tokenIdsExact: true,
  finishReason: 'stop',
  modelId: 'm',
  policyVersion: 3,
});

test('every scored sample of a decision is a sample of its own', () => {
  const played = completion([1, 2]);
  const alt = completion([4]);
  const broken = completion(null);
  const trajectories = [{ id: 't', status: 'completed', turns: [{ index: 0, calls: [] } as unknown as Turn] } as unknown as Trajectory];
  const ref = { trajectoryId: 't', turn: 0, call: 0, reward: 0, invalid: false };
  const batch = buildDecisionSamples(trajectories, [
    { ...ref, sample: 0, completion: played, advantage: 0.5 },
    { ...ref, sample: 1, completion: alt, advantage: -0.5 },
    { ...ref, sample: 2, completion: broken, advantage: 1 },
  ]);
  assert.deepEqual(batch.samples.map((s) => s.tokens), [[7, 8, 9, 1, 2], [7, 8, 9, 4]]);
  assert.deepEqual(batch.samples.map((s) => s.lossMask), [[0, 0, 0, 1, 1], [0, 0, 0, 1]]);
  assert.deepEqual(batch.samples.map((s) => s.advantages), [[0, 0, 0, 0.5, 0.5], [0, 0, 0, -0.5]]);
  assert.deepEqual(batch.samples[0].logprobs, [0, 0, 0, -0.1, -0.2]);
  assert.deepEqual(batch.samples.map((s) => s.id), ['t:0.0:0', 't:0.0:1']);
  assert.equal(batch.samples[1].groupId, 't:0:0');
  assert.equal(batch.stats.excluded.missing_ids, 1);
  assert.equal(batch.stats.trainedCalls, 2);
  assert.equal(batch.stats.trainedTokens, 3);
  assert.throws(() => buildDecisionSamples([], [{ ...ref, sample: 0, completion: played, advantage: 0 }]), /no trajectory 't'/);
  // A truncated episode's decisions keep their exact credit: they are trained, not masked.
  const truncated = [{ ...trajectories[0], status: 'truncated' } as Trajectory];
  const kept = buildDecisionSamples(truncated, [{ ...ref, sample: 0, completion: played, advantage: 0.5 }]);
  assert.equal(kept.samples.length, 1);
  assert.equal(kept.stats.truncated.episode, 0);
});

test("invalidAnswers 'penalize' (the default): a refused answer trains with invalidPenalty, a legal one with its decision's advantage", () => {
  const trajectories = [{ id: 't', status: 'completed', turns: [{ index: 0, calls: [] } as unknown as Turn] } as unknown as Trajectory];
  const ref = { trajectoryId: 't', turn: 0, call: 0, reward: 0 };
  const decisions = [
    { ...ref, sample: 0, completion: completion([1, 2]), advantage: 0.7, invalid: false },
    { ...ref, sample: 1, completion: completion([4]), advantage: 0, invalid: true },
  ];
  assert.deepEqual(buildDecisionSamples(trajectories, decisions).samples.map((s) => s.advantages.slice(3)), [[0.7, 0.7], [-1]]);
  const shared = buildDecisionSamples(trajectories, decisions, { invalidAnswers: 'share' });
  assert.deepEqual(shared.samples.map((s) => s.advantages.slice(3)), [[0.7, 0.7], [0]]);
  assert.equal(shared.stats.invalidPenalized, 0);
  const penalized = buildDecisionSamples(trajectories, decisions, { invalidAnswers: 'penalize', invalidPenalty: -0.5 });
  assert.deepEqual(penalized.samples.map((s) => s.advantages.slice(3)), [[0.7, 0.7], [-0.5]]);
  assert.equal(penalized.stats.invalidPenalized, 1);
});

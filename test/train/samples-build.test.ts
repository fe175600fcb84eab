import assert from 'node:assert/strict';
import { test } from 'node:test';
import { computeAdvantages } from '../../src/advantage/compute.ts';
import { scoredGroupsFromTrajectories } from '../../src/advantage/from-trajectories.ts';
import { UsageError } from '../../src/core/errors.ts';
import { buildSamples } from '../../src/train/samples.ts';
import { call, EOT, stablePrompts as P, trajectory } from './samples-fixtures.ts';

const threeTurns = () =>
  trajectory('t1', [
    [call({ prompt: P.p0, ids: P.c0, logprobs: [-0.5, -0.25, -0.125] })],
    [call({ prompt: P.p1, ids: P.c1, logprobs: [-1, -2] })],
    [call({ prompt: P.p2, ids: P.c2, logprobs: [-3, -4, -5], policyVersion: 2 })],
  ]);
const turnAdvantages = [0.5, -1, 2];

test('per-turn samples: prompt ids then sampled ids, mask, advantage and logprobs line up token by token', () => {
  const { samples, stats } = buildSamples([threeTurns()], [{ trajectoryId: 't1', groupId: 'g1', turnAdvantages }], { pack: false });
  assert.equal(samples.length, 3);

  const [s0, s1, s2] = samples;
  assert.deepEqual(s0.tokens, [1, 2, 3, 10, 11, EOT]);
  assert.deepEqual(s0.lossMask, [0, 0, 0, 1, 1, 1]);
  assert.deepEqual(s0.advantages, [0, 0, 0, 0.5, 0.5, 0.5]);
  assert.deepEqual(s0.logprobs, [0, 0, 0, -0.5, -0.25, -0.125]);
  assert.deepEqual(s0.spans.map((s) => [s.start, s.end, s.turn, s.call]), [[3, 6, 0, 0]]);

  assert.deepEqual(s1.tokens, [1, 2, 3, 10, 11, EOT, 4, 5, 12, EOT]);
  assert.deepEqual(s1.lossMask, [0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
  assert.deepEqual(s1.advantages, [0, 0, 0, 0, 0, 0, 0, 0, -1, -1]);
  assert.deepEqual(s1.logprobs, [0, 0, 0, 0, 0, 0, 0, 0, -1, -2]);

  assert.deepEqual(s2.tokens, [...P.p2, 13, 14, EOT]);
  assert.deepEqual(s2.lossMask, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1]);
  assert.deepEqual(s2.advantages.slice(11), [2, 2, 2]);
  assert.deepEqual(s2.logprobs.slice(11), [-3, -4, -5]);
  assert.equal(s2.policyVersion, 2);
  assert.equal(s0.policyVersion, 3);
  assert.equal(s0.id, 't1:0.0');
  assert.equal(s2.groupId, 'g1');

  assert.equal(stats.samples, 3);
  assert.equal(stats.tokens, 6 + 10 + 14);
  assert.equal(stats.trainedTokens, 8);
  assert.equal(stats.tokensUnpacked, 30);
  assert.equal(stats.packedShare, 0);
  assert.equal(stats.packFallbacks, 0);
});

test('every call of a turn (invalid answers that were retried, informational rounds) is its own span with the turn advantage', () => {
  const t = trajectory('t1', [
    [
      call({ prompt: [1, 2], ids: [7, EOT] }), // invalid answer, retried
      call({ prompt: [1, 2, 7, EOT, 8], ids: [9, EOT] }), // informational call
      call({ prompt: [1, 2, 7, EOT, 8, 9, EOT, 8], ids: [10, EOT] }), // the action
    ],
    [call({ prompt: [1, 2, 7, EOT, 8, 9, EOT, 8, 10, EOT, 5], ids: [11, EOT] })],
  ]);
  const advantages = [{ trajectoryId: 't1', groupId: 'g1', turnAdvantages: [-0.75, 1.5] }];

  const perCall = buildSamples([t], advantages, { pack: false });
  assert.deepEqual(perCall.samples.map((s) => [s.spans[0].turn, s.spans[0].call, s.spans[0].advantage]), [
    [0, 0, -0.75],
    [0, 1, -0.75],
    [0, 2, -0.75],
    [1, 0, 1.5],
  ]);

  const packed = buildSamples([t], advantages);
  assert.equal(packed.samples.length, 1);
  assert.deepEqual(packed.samples[0].lossMask, [0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1]);
  assert.deepEqual(packed.samples[0].advantages, [0, 0, -0.75, -0.75, 0, -0.75, -0.75, 0, -0.75, -0.75, 0, 1.5, 1.5]);
  assert.equal(packed.stats.trainedCalls, 4);
  assert.equal(packed.stats.packedShare, 1);
});

test('advantages computed by src/advantage flow into the samples of each trajectory', () => {
  const a = trajectory('a', [[call({ prompt: [1], ids: [5, EOT] })]], { reward: 1 });
  const b = trajectory('b', [[call({ prompt: [1], ids: [6, EOT] })]], { reward: 0 });
  const { advantages } = computeAdvantages(scoredGroupsFromTrajectories([a, b]), { estimator: 'grpo' });
  const { samples } = buildSamples([a, b], advantages);
  assert.deepEqual(samples.map((s) => s.trajectoryId), ['a', 'b']);
  assert.deepEqual(samples[0].advantages, [0, advantages[0].turnAdvantages[0], advantages[0].turnAdvantages[0]]);
  assert.ok(samples[0].advantages[1] > 0 && samples[1].advantages[1] < 0);
  assert.deepEqual(samples.map((s) => s.score), [1, 0]);
});

test('trajectories without an advantage entry are not read', () => {
  const other = trajectory('other', [[call({ prompt: [1], ids: [2] })]]);
  const { samples, stats } = buildSamples([threeTurns(), other], [{ trajectoryId: 't1', groupId: 'g1', turnAdvantages }]);
  assert.deepEqual([...new Set(samples.map((s) => s.trajectoryId))], ['t1']);
  assert.equal(stats.trajectories, 1);
  assert.equal(stats.calls, 3);
});

test('an advantage that does not fit its trajectory is an error naming the field', () => {
  assert.throws(
    () => buildSamples([threeTurns()], [{ trajectoryId: 't1', groupId: 'g1', turnAdvantages: [1, 2] }]),
    /advantages\.0\.turnAdvantages: 2 values for trajectory 't1', which has 3 turns/,
  );
  assert.throws(
    () => buildSamples([threeTurns()], [{ trajectoryId: 't1', groupId: 'g1', turnAdvantages: [1, NaN, 2] }]),
    /advantages\.0\.turnAdvantages\.1: must be a finite number/,
  );
  assert.throws(() => buildSamples([], [{ trajectoryId: 'zz', groupId: 'g', turnAdvantages: [] }]), /advantages\.0\.trajectoryId: no trajectory 'zz'/);
  assert.throws(() => buildSamples([threeTurns(), threeTurns()], []), /trajectories\.1\.id: 't1' appears twice/);
});

test('bad options are usage errors naming the field', () => {
  const build = (config: unknown) => () => buildSamples([], [], config as never);
  assert.throws(build({ truncationPenalty: 0.5 }), (e: unknown) => e instanceof UsageError && /samples\.truncationPenalty: a penalty pushes down/.test(e.message));
  assert.throws(build({ truncated: 'drop' }), (e: unknown) => e instanceof UsageError && /samples\.truncated/.test(e.message));
  assert.throws(build({ packing: true }), (e: unknown) => e instanceof UsageError && /packing/.test(e.message));
  assert.throws(build({ maxPackedTokens: 0 }), /samples\.maxPackedTokens/);
});

test('finished completions that do not end with an end-of-turn id are counted when the ids are configured', () => {
  const t = trajectory('t1', [
    [call({ prompt: [1], ids: [5, EOT] })],
    [call({ prompt: [1, 5, EOT, 2], ids: [6, 7] })],
    [call({ prompt: [1, 5, EOT, 2, 6, 7, 3], ids: [8], finishReason: 'length' })],
  ]);
  const advantages = [{ trajectoryId: 't1', groupId: 'g1', turnAdvantages: [1, 1, 1] }];
  assert.equal(buildSamples([t], advantages, { endOfTurnTokenIds: [EOT], truncated: 'keep' }).stats.missingEndOfTurn, 1);
  assert.equal(buildSamples([t], advantages, { truncated: 'keep' }).stats.missingEndOfTurn, 0);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildSamples } from '../../src/train/samples.ts';
import { call, EOT, stablePrompts as P, trajectory } from './samples-fixtures.ts';

const adv = (id: string, turnAdvantages: number[]) => [{ trajectoryId: id, groupId: 'g1', turnAdvantages }];

test('prefix-stable ids pack the whole conversation into one sequence with one masked span per turn', () => {
  const t = trajectory('t1', [
    [call({ prompt: P.p0, ids: P.c0, logprobs: [-0.5, -0.25, -0.125], policyVersion: 4 })],
    [call({ prompt: P.p1, ids: P.c1, logprobs: [-1, -2], policyVersion: 3 })],
    [call({ prompt: P.p2, ids: P.c2, logprobs: [-3, -4, -5], policyVersion: 4 })],
  ]);
  const { samples, stats } = buildSamples([t], adv('t1', [0.5, -1, 2]));
  assert.equal(samples.length, 1);
  const [s] = samples;
  //                      p0------  c0--------  obs-  c1----  obs  c2--------
  assert.deepEqual(s.tokens, [1, 2, 3, 10, 11, EOT, 4, 5, 12, EOT, 6, 13, 14, EOT]);
  assert.deepEqual(s.lossMask, [0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1]);
  assert.deepEqual(s.advantages, [0, 0, 0, 0.5, 0.5, 0.5, 0, 0, -1, -1, 0, 2, 2, 2]);
  assert.deepEqual(s.logprobs, [0, 0, 0, -0.5, -0.25, -0.125, 0, 0, -1, -2, 0, -3, -4, -5]);
  assert.deepEqual(s.spans.map((x) => [x.start, x.end, x.turn, x.policyVersion]), [
    [3, 6, 0, 4],
    [8, 10, 1, 3],
    [11, 14, 2, 4],
  ]);
  assert.equal(s.policyVersion, 3, 'the oldest span version');
  assert.equal(stats.packedShare, 1);
  assert.equal(stats.packFallbacks, 0);
  assert.equal(stats.tokens, 14);
  assert.equal(stats.tokensUnpacked, 6 + 10 + 14);
  assert.equal(stats.trainedTokens, 8);
});

test('reasoning stripped from earlier turns (Qwen3-style) breaks the prefix: one sample per turn, counted', () => {
  const THINK = [20, 21];
  // Each call sampled reasoning + answer; each later prompt re-renders the earlier answers without it.
  const t = trajectory('t1', [
    [call({ prompt: P.p0, ids: [...THINK, 10, 11, EOT] })],
    [call({ prompt: P.p1, ids: [...THINK, 12, EOT] })],
    [call({ prompt: P.p2, ids: [...THINK, 13, 14, EOT] })],
  ]);
  const { samples, stats } = buildSamples([t], adv('t1', [1, 2, 3]));
  assert.equal(samples.length, 3);
  assert.deepEqual(samples[1].tokens, [...P.p1, 20, 21, 12, EOT]);
  assert.deepEqual(samples[1].lossMask, [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1]);
  assert.equal(stats.packFallbacks, 2);
  assert.equal(stats.packedShare, 0);
  assert.equal(stats.tokens, stats.tokensUnpacked);
});

test('only a middle prompt that differs splits the conversation; the calls that do extend each other still pack', () => {
  const p1Changed = [1, 2, 3, 10, 11, EOT, 4, 77]; // the observation of turn 1 rendered differently
  const p2AfterChanged = [...p1Changed, 12, EOT, 6];
  const t = trajectory('t1', [
    [call({ prompt: P.p0, ids: P.c0 })],
    [call({ prompt: [1, 2, 3, 10, 88, EOT, 4, 5], ids: P.c1 })], // turn 0's answer is not what was sampled
    [call({ prompt: [1, 2, 3, 10, 88, EOT, 4, 5, 12, EOT, 6], ids: P.c2 })],
  ]);
  const split = buildSamples([t], adv('t1', [1, 2, 3]));
  assert.deepEqual(split.samples.map((s) => s.spans.map((x) => x.turn)), [[0], [1, 2]]);
  assert.equal(split.stats.packFallbacks, 1);
  assert.equal(split.stats.packedShare, 2 / 3);

  const t2 = trajectory('t2', [
    [call({ prompt: P.p0, ids: P.c0 })],
    [call({ prompt: p1Changed, ids: P.c1 })],
    [call({ prompt: p2AfterChanged, ids: P.c2 })],
  ]);
  // p1Changed still starts with p0 + c0: the observation is new text, so all three pack.
  assert.equal(buildSamples([t2], adv('t2', [1, 2, 3])).samples.length, 1);
});

test('an excluded call in the middle stays in the sequence as untrained context', () => {
  const t = trajectory('t1', [
    [call({ prompt: P.p0, ids: P.c0 })],
    [call({ prompt: P.p1, ids: P.c1, exact: false })],
    [call({ prompt: P.p2, ids: P.c2 })],
  ]);
  const { samples, stats } = buildSamples([t], adv('t1', [1, 2, 3]));
  assert.equal(samples.length, 1);
  assert.deepEqual(samples[0].lossMask, [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1]);
  assert.deepEqual(samples[0].advantages, [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 3, 3, 3]);
  assert.equal(stats.excluded.inexact_ids, 1);
});

test('maxPackedTokens starts a new sequence instead of growing past the limit', () => {
  const t = trajectory('t1', [
    [call({ prompt: P.p0, ids: P.c0 })],
    [call({ prompt: P.p1, ids: P.c1 })],
    [call({ prompt: P.p2, ids: P.c2 })],
  ]);
  const { samples, stats } = buildSamples([t], adv('t1', [1, 2, 3]), { maxPackedTokens: 12 });
  assert.deepEqual(samples.map((s) => s.tokens.length), [10, 14]);
  assert.deepEqual(samples.map((s) => s.spans.map((x) => x.turn)), [[0, 1], [2]]);
  assert.equal(stats.packLimitSplits, 1);
  assert.equal(stats.packFallbacks, 0);
});

test('conversations are never packed together, even when one trajectory\'s ids extend another\'s', () => {
  const a = trajectory('a', [[call({ prompt: P.p0, ids: P.c0 })]]);
  const b = trajectory('b', [[call({ prompt: P.p1, ids: P.c1 })]]);
  const { samples } = buildSamples([a, b], [...adv('a', [1]), ...adv('b', [2])]);
  assert.deepEqual(samples.map((s) => s.trajectoryId), ['a', 'b']);
});

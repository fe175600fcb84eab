import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildSamples } from '../../src/train/samples.ts';
import { EXCLUSION_REASONS } from '../../src/train/samples-types.ts';
import { call, EOT, trajectory } from './samples-fixtures.ts';

// Six one-call turns, each a different kind of recorded completion; pack: false keeps them apart.
const mixed = () =>
  trajectory('t1', [
    [call({ prompt: [1, 2], ids: [5, EOT] })], // fine
    [call({ prompt: [1, 3], ids: [6, EOT], exact: false })], // re-tokenised by the backend
    [call({ prompt: null, ids: null, logprobs: null })], // scripted policy / no ids
    [call({ prompt: [1, 4], ids: [7, EOT], logprobs: null })], // no sampling logprobs
    [call({ prompt: [1, 5], ids: [8, EOT], logprobs: [-0.5] })], // one logprob for two tokens
    [call({ prompt: null, ids: null, logprobs: null, finishReason: 'timeout' })],
  ]);
const advantages = [{ trajectoryId: 't1', groupId: 'g1', turnAdvantages: [1, 1, 1, 1, 1, 1] }];

test('calls without exact ids and logprobs are left out and counted by reason, never re-tokenised', () => {
  const { samples, stats } = buildSamples([mixed()], advantages, { pack: false });
  assert.deepEqual(samples.map((s) => s.spans[0].turn), [0]);
  assert.deepEqual(samples[0].tokens, [1, 2, 5, EOT]);
  assert.equal(stats.calls, 6);
  assert.equal(stats.trainedCalls, 1);
  assert.deepEqual(stats.excluded, {
    call_failed: 1,
    missing_ids: 1,
    bad_ids: 0,
    empty_completion: 0,
    inexact_ids: 1,
    missing_logprobs: 1,
    bad_logprobs: 1,
    truncated_length: 0,
    truncated_episode: 0,
  });
  assert.deepEqual(Object.keys(stats.excluded), [...EXCLUSION_REASONS]);
});

test('with allowApproximateIds, re-tokenised ids are trained and flagged', () => {
  const { samples, stats } = buildSamples([mixed()], advantages, { pack: false, allowApproximateIds: true });
  assert.deepEqual(samples.map((s) => [s.spans[0].turn, s.spans[0].exactIds]), [
    [0, true],
    [1, false],
  ]);
  assert.deepEqual(samples[1].tokens, [1, 3, 6, EOT]);
  assert.equal(stats.approximateIds, 1);
  assert.equal(stats.excluded.inexact_ids, 0);
});

test('empty completions and invalid ids are left out', () => {
  const t = trajectory('t1', [
    [call({ prompt: [1], ids: [] })],
    [call({ prompt: [1, -2], ids: [3] })],
    [call({ prompt: [1], ids: [2.5] })],
    [call({ prompt: [1], ids: [3], logprobs: [NaN] })],
  ]);
  const { samples, stats } = buildSamples([t], [{ trajectoryId: 't1', groupId: 'g1', turnAdvantages: [1, 1, 1, 1] }]);
  assert.equal(samples.length, 0);
  assert.equal(stats.excluded.empty_completion, 1);
  assert.equal(stats.excluded.bad_ids, 2);
  assert.equal(stats.excluded.bad_logprobs, 1);
  assert.equal(stats.packedShare, 0);
  assert.equal(stats.trainedTokens, 0);
});

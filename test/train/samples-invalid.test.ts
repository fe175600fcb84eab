/** Refused answers in the samples: trained with their turn's advantage ('share'), or with a fixed penalty ('penalize'). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildSamples } from '../../src/train/samples.ts';
import { call, EOT, trajectory } from './samples-fixtures.ts';

// Turn 1's first answer was refused and retried; the retry was legal and the episode won.
const retried = () => {
  const refused = { ...call({ prompt: [1, 2, 5, EOT, 3], ids: [6, EOT] }), invalid: true };
  return trajectory('won', [[call({ prompt: [1, 2], ids: [5, EOT] })], [refused, call({ prompt: [1, 2, 5, EOT, 3, 6, EOT, 4], ids: [7, EOT] })]]);
};
const advantages = [{ trajectoryId: 'won', groupId: 'g1', turnAdvantages: [0.75, 0.75] }];

test("invalidAnswers 'share': a refused answer takes its turn's advantage", () => {
  const { samples, stats } = buildSamples([retried()], advantages, { invalidAnswers: 'share' });
  assert.deepEqual(samples[0].lossMask, [0, 0, 1, 1, 0, 1, 1, 0, 1, 1]);
  assert.deepEqual(samples[0].advantages, [0, 0, 0.75, 0.75, 0, 0.75, 0.75, 0, 0.75, 0.75]);
  assert.equal(stats.invalidPenalized, 0);
});

test("invalidAnswers 'penalize' (the default): a refused answer is pushed down even in an episode that won", () => {
  assert.deepEqual(buildSamples([retried()], advantages).samples[0].advantages, [0, 0, 0.75, 0.75, 0, -1, -1, 0, 0.75, 0.75]);
  const { samples, stats } = buildSamples([retried()], advantages, { invalidAnswers: 'penalize', invalidPenalty: -1.5 });
  assert.deepEqual(samples[0].advantages, [0, 0, 0.75, 0.75, 0, -1.5, -1.5, 0, 0.75, 0.75]);
  assert.deepEqual(samples[0].spans.map((s) => s.advantage), [0.75, -1.5, 0.75]);
  assert.equal(stats.invalidPenalized, 1);
  assert.throws(() => buildSamples([retried()], advantages, { invalidAnswers: 'penalize', invalidPenalty: 1 }), /samples\.invalidPenalty: a penalty pushes down/);
});

test("refusedOnly (a group dropped for tying): only its refused answers train, at the penalty; under 'share' nothing does", () => {
  const tied = [{ trajectoryId: 'won', groupId: 'g1', turnAdvantages: [0, 0] }];
  const { samples, stats } = buildSamples([retried()], tied, {}, { refusedOnly: new Set(['won']) });
  assert.equal(samples.length, 1);
  // The refused answer alone: its prompt, then its two completion tokens at −1.
  assert.deepEqual(samples[0].tokens, [1, 2, 5, EOT, 3, 6, EOT]);
  assert.deepEqual(samples[0].lossMask, [0, 0, 0, 0, 0, 1, 1]);
  assert.deepEqual(samples[0].advantages, [0, 0, 0, 0, 0, -1, -1]);
  assert.equal(stats.calls, 1);
  assert.equal(stats.invalidPenalized, 1);
  assert.deepEqual(buildSamples([retried()], tied, { invalidAnswers: 'share' }, { refusedOnly: new Set(['won']) }).samples, []);
  // A tied trajectory without a refused answer gives nothing; the others are built as before.
  const legal = trajectory('lost', [[call({ prompt: [1, 2], ids: [5, EOT] })]]);
  const both = buildSamples([retried(), legal], [...advantages, { trajectoryId: 'lost', groupId: 'g2', turnAdvantages: [0] }], {}, { refusedOnly: new Set(['lost']) });
  assert.equal(both.samples.length, 1);
  assert.deepEqual(both.samples[0].advantages, [0, 0, 0.75, 0.75, 0, -1, -1, 0, 0.75, 0.75]);
  assert.equal(both.stats.trajectories, 1);
});

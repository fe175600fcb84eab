import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildSamples } from '../../src/train/samples.ts';
import { call, EOT, trajectory } from './samples-fixtures.ts';

// Turn 1 was cut at max tokens (no end-of-turn id); its retry in the same turn finished.
const cutAtMaxTokens = () =>
  trajectory('cut', [
    [call({ prompt: [1, 2], ids: [5, EOT] })],
    [
      call({ prompt: [1, 2, 5, EOT, 3], ids: [6, 6, 6], finishReason: 'length' }),
      call({ prompt: [1, 2, 5, EOT, 3, 6, 6, 6, 4], ids: [7, EOT] }),
    ],
  ]);
const cutAdvantages = [{ trajectoryId: 'cut', groupId: 'g1', turnAdvantages: [0.5, 0.25] }];

test("truncated: 'mask' leaves completions cut at max tokens out (they stay as context), counted", () => {
  const { samples, stats } = buildSamples([cutAtMaxTokens()], cutAdvantages, { truncated: 'mask' });
  assert.equal(samples.length, 1);
  assert.deepEqual(samples[0].lossMask, [0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1]);
  assert.deepEqual(samples[0].advantages, [0, 0, 0.5, 0.5, 0, 0, 0, 0, 0, 0.25, 0.25]);
  assert.equal(stats.excluded.truncated_length, 1);
  assert.equal(stats.truncated.length, 1);
  assert.equal(stats.penalized, 0);
});

test("truncated: 'penalize' trains the cut completion with the penalty as its advantage", () => {
  const { samples, stats } = buildSamples([cutAtMaxTokens()], cutAdvantages, { truncated: 'penalize', truncationPenalty: -2 });
  assert.deepEqual(samples[0].lossMask, [0, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1]);
  assert.deepEqual(samples[0].advantages, [0, 0, 0.5, 0.5, 0, -2, -2, -2, 0, 0.25, 0.25]);
  assert.deepEqual(samples[0].spans.map((s) => [s.truncation, s.advantage]), [
    [null, 0.5],
    ['length', -2],
    [null, 0.25],
  ]);
  assert.equal(stats.penalized, 1);
  assert.equal(stats.excluded.truncated_length, 0);
});

test("truncated: 'keep' trains it with the turn's advantage, flagged", () => {
  const { samples, stats } = buildSamples([cutAtMaxTokens()], cutAdvantages, { truncated: 'keep' });
  assert.deepEqual(samples[0].advantages, [0, 0, 0.5, 0.5, 0, 0.25, 0.25, 0.25, 0, 0.25, 0.25]);
  assert.equal(samples[0].spans[1].truncation, 'length');
  assert.equal(stats.truncated.length, 1);
  assert.equal(stats.penalized, 0);
});

const truncatedEpisode = () =>
  trajectory('ep', [[call({ prompt: [1], ids: [5, EOT] })], [call({ prompt: [1, 5, EOT, 2], ids: [6, EOT] })]], { status: 'truncated' });
const episodeAdvantages = [{ trajectoryId: 'ep', groupId: 'g1', turnAdvantages: [1, 1] }];

test('a truncated episode: every call is masked, penalised or kept as the mode says', () => {
  const masked = buildSamples([truncatedEpisode()], episodeAdvantages, { truncated: 'mask' });
  assert.equal(masked.samples.length, 0);
  assert.equal(masked.stats.excluded.truncated_episode, 2);
  assert.equal(masked.stats.truncated.episode, 2);

  const penalized = buildSamples([truncatedEpisode()], episodeAdvantages, { truncated: 'penalize', truncationPenalty: -0.5 });
  assert.deepEqual(penalized.samples[0].advantages, [0, -0.5, -0.5, 0, -0.5, -0.5]);
  assert.equal(penalized.stats.penalized, 2);

  const kept = buildSamples([truncatedEpisode()], episodeAdvantages, { truncated: 'keep' });
  assert.deepEqual(kept.samples[0].advantages, [0, 1, 1, 0, 1, 1]);
  assert.deepEqual(kept.samples[0].spans.map((s) => s.truncation), ['episode', 'episode']);
});

test("the default is 'mask' with penalty −1", () => {
  assert.equal(buildSamples([truncatedEpisode()], episodeAdvantages).samples.length, 0);
  const { samples } = buildSamples([cutAtMaxTokens()], cutAdvantages, { truncated: 'penalize' });
  assert.equal(samples[0].spans[1].advantage, -1);
});

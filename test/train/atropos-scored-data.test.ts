import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ATROPOS_MASKED_LOGPROB, atroposToJsonl, toAtroposScoredData } from '../../src/train/atropos.ts';
import { atroposScoredDataSchema, parseAtroposScoredData } from '../../src/train/atropos-schema.ts';
import { decodeJsonl } from '../../src/train/jsonl.ts';
import { buildSamples } from '../../src/train/samples.ts';
import { call, EOT, trajectory } from './samples-fixtures.ts';

function batch() {
  const a = trajectory('a', [
    [call({ prompt: [1, 2], ids: [5, EOT], logprobs: [-0.5, -0.25], messages: [{ role: 'user', content: 'start' }], text: 'A' })],
    [call({
      prompt: [1, 2, 5, EOT, 3],
      ids: [6, EOT],
      logprobs: [-1, -2],
      messages: [
        { role: 'user', content: 'start' },
        { role: 'assistant', content: 'A', toolCalls: [{ id: 'c1', name: 'hit', arguments: { n: 1 } }] },
        { role: 'tool', content: 'ok', toolCallId: 'c1', name: 'hit' },
      ],
      text: 'B',
    })],
  ], { reward: 1, groupId: 'g1' });
  const b = trajectory('b', [[call({ prompt: [1, 2], ids: [7, 8, EOT], logprobs: [-3, -4, -5] })]], { reward: 0, groupId: 'g1' });
  const c = trajectory('c', [[call({ prompt: [1, 9], ids: [4, EOT], logprobs: [-6, -7] })]], { reward: 2, groupId: 'g2' });
  const trajectories = [a, b, c];
  const { samples } = buildSamples(trajectories, [
    { trajectoryId: 'a', groupId: 'g1', turnAdvantages: [0.75, 0.5] },
    { trajectoryId: 'b', groupId: 'g1', turnAdvantages: [-0.75] },
    { trajectoryId: 'c', groupId: 'g2', turnAdvantages: [0] },
  ]);
  return { samples, trajectories };
}

test('one ScoredData per group: masks hold the id where trained and -100 elsewhere, every list lines up', () => {
  const { samples } = batch();
  const groups = toAtroposScoredData(samples);
  assert.equal(groups.length, 2);
  const [g1, g2] = groups;

  assert.deepEqual(g1.tokens, [
    [1, 2, 5, EOT, 3, 6, EOT],
    [1, 2, 7, 8, EOT],
  ]);
  assert.deepEqual(g1.masks, [
    [-100, -100, 5, EOT, -100, 6, EOT],
    [-100, -100, 7, 8, EOT],
  ]);
  assert.deepEqual(g1.scores, [1, 0]);
  assert.deepEqual(g1.advantages, [
    [0, 0, 0.75, 0.75, 0, 0.5, 0.5],
    [0, 0, -0.75, -0.75, -0.75],
  ]);
  assert.equal(ATROPOS_MASKED_LOGPROB, 1);
  assert.deepEqual(g1.inference_logprobs, [
    [1, 1, -0.5, -0.25, 1, -1, -2],
    [1, 1, -3, -4, -5],
  ]);
  assert.deepEqual(g1.group_overrides, { group_id: 'g1', group_size: 2 });
  assert.deepEqual(g1.overrides?.[0], { trajectory_id: 'a', sample_id: 'a:0.0', policy_version: 3, truncated: false });
  assert.equal(g1.messages, undefined);

  assert.deepEqual(g2.masks, [[-100, -100, 4, EOT]]);
  assert.deepEqual(g2.group_overrides, { group_id: 'g2', group_size: 1 });

  for (const g of groups) {
    for (const field of ['masks', 'advantages', 'inference_logprobs'] as const) {
      assert.deepEqual(g[field]?.map((row) => row.length), g.tokens.map((row) => row.length), field);
    }
    assert.equal(g.scores.length, g.tokens.length);
  }
});

test('messages, generation params, group overrides and env id when asked', () => {
  const { samples, trajectories } = batch();
  const [g1] = toAtroposScoredData(samples, {
    trajectories,
    generationParams: { temperature: 0.7 },
    groupOverrides: { sft: false, group_size: 99 },
    envId: 4,
  });
  assert.deepEqual(g1.messages?.[0], [
    { role: 'user', content: 'start' },
    { role: 'assistant', content: 'A', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'hit', arguments: '{"n":1}' } }] },
    { role: 'tool', content: 'ok', tool_call_id: 'c1', name: 'hit' },
    { role: 'assistant', content: 'B' },
  ]);
  assert.equal(g1.messages?.length, 2);
  assert.deepEqual(g1.generation_params, { temperature: 0.7 });
  assert.deepEqual(g1.group_overrides, { sft: false, group_id: 'g1', group_size: 2 });
  assert.equal(g1.env_id, 4);
  assert.throws(() => toAtroposScoredData(samples, { trajectories: [] }), /trajectory 'a' turn 1 call 0 not found/);
});

test("generation params default to the calls' one recorded temperature", () => {
  const { samples, trajectories } = batch();
  const at = (temperatures: (number | null)[]) =>
    trajectories.map((t, i) => ({ ...t, turns: t.turns.map((turn) => ({ ...turn, calls: turn.calls.map((c) => ({ ...c, sampling: { temperature: temperatures[i], maxTokens: 8 } })) })) }));
  const params = (ts: typeof trajectories) => toAtroposScoredData(samples, { trajectories: ts }).map((g) => g.generation_params);
  // Group g1 holds trajectories a and b, g2 holds c.
  assert.deepEqual(params(at([1.5, 1.5, 0.7])), [{ temperature: 1.5 }, { temperature: 0.7 }]);
  assert.deepEqual(params(at([1.5, 1, 0.7])), [undefined, { temperature: 0.7 }], 'two temperatures in a group: none sent');
  assert.deepEqual(params(at([null, null, 0])), [undefined, undefined], "the backend's default or greedy: none sent");
  assert.deepEqual(params(trajectories), [undefined, undefined], 'older records without sampling');
  assert.deepEqual(toAtroposScoredData(samples, { trajectories: at([1.5, 1.5, 0.7]), generationParams: { temperature: 2 } })[0].generation_params, { temperature: 2 });
});

test('the schema refuses data whose lists do not line up or whose masks are neither -100 nor the id', () => {
  const good = { tokens: [[1, 2, 3]], masks: [[-100, 2, 3]], scores: [1] };
  assert.deepEqual(parseAtroposScoredData(good), good);
  assert.throws(() => parseAtroposScoredData({ ...good, masks: [[-100, 2]] }), /scored_data\.masks\.0: has 2 entries for 3 tokens/);
  assert.throws(() => parseAtroposScoredData({ ...good, masks: [[-100, 2, 1]] }), /scored_data\.masks\.0\.2: must be -100 or the token id 3, got 1/);
  assert.throws(() => parseAtroposScoredData({ ...good, scores: [1, 2] }), /scored_data\.scores: has 2 entries for 1 sequences/);
  assert.throws(() => parseAtroposScoredData({ ...good, inference_logprobs: [[1, -0.5]] }), /inference_logprobs\.0: has 2 entries for 3 tokens/);
  assert.throws(() => parseAtroposScoredData({ ...good, advantages: [[0, 1, 1], [0]] }), /advantages: has 2 entries for 1 sequences/);
  assert.throws(() => parseAtroposScoredData({ ...good, messages: [[{ role: 'user' }]] }), /messages\.0\.0\.content/);
  assert.throws(() => parseAtroposScoredData({ ...good, score: [1] }), /score/);
});

test('ScoredData JSONL: one group per line, read back equal', () => {
  const { samples, trajectories } = batch();
  const groups = toAtroposScoredData(samples, { trajectories });
  const text = atroposToJsonl(groups);
  assert.equal(text.trim().split('\n').length, 2);
  assert.deepEqual(decodeJsonl(text, atroposScoredDataSchema, 'scored_data'), groups);
});

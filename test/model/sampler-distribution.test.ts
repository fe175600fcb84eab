/** The sampling distribution (temperature, top-k, top-p) and draws from it; plain JS, no engine. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../src/core/random.ts';
import { drawToken, modelLogprob, samplingDistribution } from '../../src/model/sampler-distribution.ts';

const rawLogits = [2.0, 1.0, 0.5, 0.5, -1.0, 3.0, 0.0, -2.0];
const V = rawLogits.length;
/** What the engine hands the sampler: log-softmax of the logits. */
function logSoftmax(values: number[]): Float64Array {
  const max = Math.max(...values);
  const lse = max + Math.log(values.reduce((s, v) => s + Math.exp(v - max), 0));
  return Float64Array.from(values, (v) => v - lse);
}
const logits = logSoftmax(rawLogits);

function softmax(values: number[]): number[] {
  const max = Math.max(...values);
  const e = values.map((v) => Math.exp(v - max));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}

function sum(values: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i];
  return s;
}

test('temperature alone: the tempered softmax over the whole vocabulary', () => {
  const { ids, probs } = samplingDistribution(logits, 0, V, { temperature: 0.5 });
  const expected = softmax(rawLogits.map((l) => l / 0.5));
  assert.equal(ids.length, V);
  ids.forEach((id, j) => assert.ok(Math.abs(probs[j] - expected[id]) < 1e-12));
  assert.equal(ids[0], 5, 'most probable first');
});

test('top-k keeps the k largest logits (and ties with the k-th), renormalised', () => {
  const { ids, probs } = samplingDistribution(logits, 0, V, { temperature: 1, topK: 3 });
  assert.deepEqual([...ids], [5, 0, 1]);
  assert.ok(Math.abs(sum(probs) - 1) < 1e-12);
  const expected = softmax([3, 2, 1]);
  probs.forEach((p, j) => assert.ok(Math.abs(p - expected[j]) < 1e-12));
  // k = 4 lands on a tie (0.5, 0.5): both are kept.
  assert.equal(samplingDistribution(logits, 0, V, { temperature: 1, topK: 4 }).ids.length, 5);
});

test('top-p keeps the smallest most-probable set reaching p, renormalised', () => {
  const full = softmax(rawLogits);
  // Scores shifted by a constant (raw logits or log p) give the same distribution.
  assert.deepEqual([...samplingDistribution(Float32Array.from(rawLogits), 0, V, { temperature: 1, topP: 0.8 }).ids], [...samplingDistribution(logits, 0, V, { temperature: 1, topP: 0.8 }).ids]);
  const order = [...full.keys()].sort((a, b) => full[b] - full[a]);
  for (const topP of [0.3, 0.6, 0.8, 0.95]) {
    const { ids, probs } = samplingDistribution(logits, 0, V, { temperature: 1, topP });
    let mass = 0;
    let need = 0;
    while (mass < topP) mass += full[order[need++]];
    assert.deepEqual([...ids], order.slice(0, need), `topP ${topP}`);
    // Minimal: without its last member the set falls short of p.
    assert.ok(mass - full[order[need - 1]] < topP);
    assert.ok(Math.abs(sum(probs) - 1) < 1e-12);
    ids.forEach((id, j) => assert.ok(Math.abs(probs[j] - full[id] / mass) < 1e-12));
  }
});

test('top-k then top-p at a temperature, with logprobs of kept tokens summing to 1 in probability', () => {
  const params = { temperature: 0.8, topK: 5, topP: 0.9 };
  const { ids, probs } = samplingDistribution(logits, 0, V, params);
  assert.ok(ids.length >= 1 && ids.length <= 5);
  const rng = new Rng(1);
  const seen = new Set<number>();
  let total = 0;
  for (let i = 0; i < 2000; i++) {
    const draw = drawToken(logits, 0, V, params, rng);
    assert.ok([...ids].includes(draw.token), 'draws only kept tokens');
    if (!seen.has(draw.token)) {
      seen.add(draw.token);
      total += Math.exp(draw.logprob);
    }
    assert.ok(Math.abs(draw.modelLogprob - modelLogprob(Float32Array.from(rawLogits), 0, V, draw.token)) < 1e-6);
  }
  assert.equal(seen.size, ids.length);
  assert.ok(Math.abs(total - 1) < 1e-9, `exp(logprob) over the kept set sums to ${total}`);
  assert.ok(Math.abs(sum(probs) - 1) < 1e-12);
});

test('draw frequencies follow the sampling distribution', () => {
  const params = { temperature: 1.3, topP: 0.97 };
  const { ids, probs } = samplingDistribution(logits, 0, V, params);
  const rng = new Rng(7);
  const n = 40_000;
  const counts = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const t = drawToken(logits, 0, V, params, rng).token;
    counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  ids.forEach((id, j) => {
    const freq = (counts.get(id) ?? 0) / n;
    const se = Math.sqrt((probs[j] * (1 - probs[j])) / n);
    assert.ok(Math.abs(freq - probs[j]) < 5 * se + 1e-4, `token ${id}: ${freq} vs ${probs[j]}`);
  });
});

test('greedy: argmax (lowest id on ties), sampling logprob 0, model logprob from the full softmax', () => {
  const tie = logSoftmax([1, 4, 4, 0]);
  const draw = drawToken(tie, 0, 4, { temperature: 0 }, new Rng(1));
  assert.equal(draw.token, 1);
  assert.equal(draw.logprob, 0);
  assert.ok(Math.abs(draw.modelLogprob - Math.log(softmax([1, 4, 4, 0])[1])) < 1e-12);
  // Rows: row 1 of a [2, 4] buffer.
  const two = Float64Array.from([...logSoftmax([9, 0, 0, 0]), ...logSoftmax([0, 0, 5, 0])]);
  assert.equal(drawToken(two, 1, 4, { temperature: 0 }, new Rng(1)).token, 2);
});

test('temperature-only draws (no sort) follow softmax(logits / T) and report its logprob', () => {
  const T = 0.7;
  const expected = softmax(rawLogits.map((l) => l / T));
  const rng = new Rng(11);
  const n = 40_000;
  const counts = new Array<number>(V).fill(0);
  for (let i = 0; i < n; i++) {
    const draw = drawToken(logits, 0, V, { temperature: T }, rng);
    counts[draw.token]++;
    assert.ok(Math.abs(draw.logprob - Math.log(expected[draw.token])) < 1e-9);
    assert.equal(draw.modelLogprob, logits[draw.token]);
  }
  expected.forEach((p, id) => {
    const se = Math.sqrt((p * (1 - p)) / n);
    assert.ok(Math.abs(counts[id] / n - p) < 5 * se + 1e-4, `token ${id}: ${counts[id] / n} vs ${p}`);
  });
});

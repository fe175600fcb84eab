import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Rng } from '../../src/core/random.ts';
import { initEngine, np, valueAndGrad, type Tensor } from '../../src/model/engine.ts';
import { attention, CAUSAL_QUERY_CHUNK, causalMask, MASKED } from '../../src/model/layers.ts';
import { maxAbsDiff } from './model-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

function randn(rng: Rng, shape: number[]): Tensor {
  const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; i++) data[i] = rng.normal();
  return np.array(data).reshape(shape);
}

// Longer than one chunk, not a multiple of it: the last chunk is short.
const T = 2 * CAUSAL_QUERY_CHUNK + 37;

/** q [1, 4, T, 8] over k, v [1, 2, P + T, 8] (grouped-query: 2 query heads a kv head). */
function inputs(seed: number, P: number) {
  const rng = new Rng(seed);
  return { q: randn(rng, [1, 4, T, 8]), k: randn(rng, [1, 2, P + T, 8]), v: randn(rng, [1, 2, P + T, 8]) };
}

/** Block-diagonal causal mask [1, 1, T, P + T] behind a prefix every query sees: two packed sequences. */
function packedMask(P: number, split: number): Tensor {
  const S = P + T;
  const data = new Float32Array(T * S);
  for (let t = 0; t < T; t++) {
    for (let s = 0; s < T; s++) {
      const sameSequence = t < split === s < split;
      if (s > t || !sameSequence) data[t * S + P + s] = MASKED;
    }
  }
  return np.array(data).reshape([1, 1, T, S]);
}

test('causal attention by query chunks equals the full computation, with and without a prefix or packing', async () => {
  for (const [P, mask] of [
    [0, () => causalMask(T)],
    [11, () => causalMask(T, 11 + T)],
    [11, () => packedMask(11, 150)],
  ] as const) {
    const a = inputs(P + 1, P);
    const m = mask();
    const full = await attention(a.q.ref, a.k.ref, a.v.ref, m.ref).data();
    const chunked = await attention(a.q, a.k, a.v, m, { causal: true }).data();
    assert.equal(chunked.length, 4 * T * 8);
    assert.ok(maxAbsDiff(chunked, full) < 1e-5, `prefix ${P}: ${maxAbsDiff(chunked, full)}`);
  }
});

test('the gradients through chunked causal attention equal the full computation’s', async () => {
  const P = 5;
  const a = inputs(9, P);
  const w = randn(new Rng(10), [1, 4, T, 8]);
  const objective = (causal: boolean) => (q: Tensor, k: Tensor, v: Tensor) =>
    attention(q, k, v, causalMask(T, P + T), { causal }).mul(w.ref).sum();
  const [fullValue, fullGrads] = valueAndGrad(objective(false), { argnums: [0, 1, 2] })(a.q.ref, a.k.ref, a.v.ref);
  const [value, grads] = valueAndGrad(objective(true), { argnums: [0, 1, 2] })(a.q, a.k, a.v);
  w.dispose();
  assert.ok(Math.abs((await value.data())[0] - (await fullValue.data())[0]) < 1e-3);
  for (let i = 0; i < 3; i++) {
    const g = await grads[i].data();
    const f = await fullGrads[i].data();
    assert.ok(maxAbsDiff(g, f) < 1e-4, `gradient ${'qkv'[i]}: ${maxAbsDiff(g, f)}`);
    // Not trivially zero.
    assert.ok(Array.from(f as ArrayLike<number>).some((x) => Math.abs(x) > 1e-3));
  }
});

/**
 * The engine's Wasm memory serves tensors whose sizes keep changing (a sampler's KV cache as
 * episodes grow and end, training layouts of several shapes). jax-js 0.1.25 kept a freed large
 * block for its exact size only, so a long run of changing shapes ran out of the 4 GiB memory32
 * space (a nim run did, at its first RL step); Spindle's patch (patches/@jax-js+jax+0.1.25.patch)
 * merges freed neighbours and splits bigger blocks. Both cases below fail without it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initEngine, np, type Tensor } from '../../src/model/engine.ts';

const MB = 1024 * 1024;

/** A buffer of exactly `floats` floats in the engine's memory, its last entry `mark`. */
async function buffer(floats: number, mark: number): Promise<Tensor> {
  const host = new Float32Array(floats);
  host[floats - 1] = mark;
  const x = np.array(host);
  assert.equal((await x.ref.slice([floats - 1, floats]).data())[0], mark);
  return x;
}

test('growing sizes, each freed before the next: 9 GB in turn within the 4 GiB space', async () => {
  await initEngine({ threads: 1 });
  for (let n = 1; n <= 100; n++) (await buffer(((40 + n) * MB) / 4 + 16 * n, n)).dispose();
});

test('shrinking sizes with a small tensor kept after each: freed blocks are split for the next', async () => {
  await initEngine({ threads: 1 });
  const kept: Tensor[] = [];
  for (let n = 100; n >= 1; n--) {
    const big = await buffer(((40 + n) * MB) / 4 + 16 * n, n);
    kept.push(await buffer(16, -n)); // lies after `big`, so its block is not the heap's top
    big.dispose();
  }
  for (const [i, x] of kept.entries()) assert.equal((await x.slice([15, 16]).data())[0], -(100 - i));
});

/**
 * KvCache.extractRows: each row's sequence comes out slot for slot, the same bits: the shared
 * prefix, the prompt's real slots (padding holes skipped), the decoded tokens merged into `past`,
 * then those still in the open block.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine, np, type Tensor } from '../../src/model/engine.ts';
import { CachedForward } from '../../src/model/kv-cache-forward.ts';
import { KvCache } from '../../src/model/kv-cache.ts';
import { samplerConfig } from './sampler-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const cfg = samplerConfig({ num_hidden_layers: 1 }); // 2 kv heads of 8
const H = cfg.numKvHeads;
const hd = cfg.headDim;

/** A distinct value for (row, head, token, dim, k or v): token codes are the sequence position's meaning. */
const code = (b: number, h: number, token: number, d: number, v: number) => 100_000 * v + 10_000 * b + 1_000 * h + 10 * token + d;

function block(batch: number, width: number, token: (b: number, t: number) => number, v: number): Tensor {
  const data = new Float32Array(batch * H * width * hd);
  for (let b = 0; b < batch; b++)
    for (let h = 0; h < H; h++)
      for (let t = 0; t < width; t++) for (let d = 0; d < hd; d++) data[((b * H + h) * width + t) * hd + d] = code(b, h, token(b, t), d, v);
  return np.array(data).reshape([batch, H, width, hd]);
}

/** Row i's first `length` slots of an extracted [n, H, N, hd] layer, as codes per head and token. */
function tokensOf(x: Tensor, i: number, length: number): number[][] {
  const [, , N] = x.shape;
  const data = x.ref.dataSync() as Float32Array;
  return Array.from({ length: H }, (_, h) =>
    Array.from({ length }, (_, t) => {
      const at = ((i * H + h) * N + t) * hd;
      for (let d = 0; d < hd; d++) assert.equal(data[at + d] - data[at], d, 'dims stay in order');
      return data[at];
    }),
  );
}

test('extractRows returns the shared prefix, prompt, merged and open decoded slots of each row, exactly', async () => {
  const fwd = new CachedForward(cfg);
  const batch = 2;
  const lengths = [3, 2]; // row 1's third prompt slot is padding
  const prompt = [{ k: block(batch, 3, (_b, t) => t, 0), v: block(batch, 3, (_b, t) => t, 1) }];
  // Shared prefix of 2 tokens (batch 1), coded as token 90 + t of row 0.
  const shared = [[{ k: block(1, 2, (_b, t) => 90 + t, 0), v: block(1, 2, (_b, t) => 90 + t, 1) }]];
  const K = 4;
  const cache = KvCache.fromPrefill(cfg, K, shared, 2, prompt, lengths);
  // Six decode steps: four fill a block that is merged into past, two stay in the open block.
  let open = new Float32Array(batch * H * K * hd);
  let openV = new Float32Array(batch * H * K * hd);
  for (let j = 0; j < 6; j++) {
    const slot = cache.nextSlot((past, o, offset) => fwd.merge(past, o, offset));
    if (slot === 0) {
      open = new Float32Array(open.length);
      openV = new Float32Array(openV.length);
    }
    for (let b = 0; b < batch; b++)
      for (let h = 0; h < H; h++)
        for (let d = 0; d < hd; d++) {
          open[((b * H + h) * K + slot) * hd + d] = code(b, h, 50 + j, d, 0);
          openV[((b * H + h) * K + slot) * hd + d] = code(b, h, 50 + j, d, 1);
        }
    cache.commitDecode([{ k: np.array(open).reshape([batch, H, K, hd]), v: np.array(openV).reshape([batch, H, K, hd]) }], slot);
  }
  const expected = (b: number, promptLength: number, decoded: number, v: number) =>
    Array.from({ length: H }, (_, h) => [
      ...[0, 1].map((t) => code(0, h, 90 + t, 0, v)),
      ...Array.from({ length: promptLength }, (_, t) => code(b, h, t, 0, v)),
      ...Array.from({ length: decoded }, (_, j) => code(b, h, 50 + j, 0, v)),
    ]);

  // Rows in a new order, one of them twice; fed counts reaching into the open block or not.
  const rows = [1, 0, 1];
  const fed = [6, 5, 3];
  const out = cache.extractRows(rows, fed);
  assert.deepEqual(out.lengths, [2 + 2 + 6, 2 + 3 + 5, 2 + 2 + 3]);
  rows.forEach((r, i) => {
    assert.deepEqual(tokensOf(out.layers[0].k, i, out.lengths[i]), expected(r, lengths[r], fed[i], 0), `keys of row ${i}`);
    assert.deepEqual(tokensOf(out.layers[0].v, i, out.lengths[i]), expected(r, lengths[r], fed[i], 1), `values of row ${i}`);
  });
  out.layers.forEach((l) => (l.k.dispose(), l.v.dispose()));

  // Only merged slots (nothing read from the open block).
  const past = cache.extractRows([0], [4]);
  assert.deepEqual(past.lengths, [2 + 3 + 4]);
  assert.deepEqual(tokensOf(past.layers[0].k, 0, 9), expected(0, 3, 4, 0));
  past.layers.forEach((l) => (l.k.dispose(), l.v.dispose()));

  assert.throws(() => cache.extractRows([0], [7]), /row 0 has 7 decoded tokens, the cache 6/);
  cache.dispose();
  fwd.dispose();
});

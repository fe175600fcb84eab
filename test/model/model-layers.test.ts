import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine, np } from '../../src/model/engine.ts';
import { MASKED, attention, causalMask, packedCausalMask, rmsNorm, swiglu } from '../../src/model/layers.ts';
import { applyRope, ropeInvFreq, ropeTables } from '../../src/model/rope.ts';
import { maxAbsDiff } from './model-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const close = (actual: ArrayLike<number>, expected: ArrayLike<number>, tol = 1e-5): void =>
  assert.ok(maxAbsDiff(actual, expected) < tol, `${Array.from(actual)} vs ${Array.from(expected)}`);

test('rmsNorm: x / sqrt(mean(x²) + eps) * w', async () => {
  // mean([3,4]²) = 12.5 -> x / 3.5355
  const y = rmsNorm(np.array([[3, 4], [0, -2]]), np.array([1, 2]), 0);
  close(await y.data(), [3 / Math.sqrt(12.5), (2 * 4) / Math.sqrt(12.5), 0, (2 * -2) / Math.sqrt(2)]);
  const withEps = rmsNorm(np.array([[1, 1]]), np.array([1, 1]), 3); // 1/sqrt(1+3) = 0.5
  close(await withEps.data(), [0.5, 0.5]);
});

test('swiglu: down(silu(x gateᵀ) * (x upᵀ))', async () => {
  // x = [1, 2]; gate rows [1,0],[0,1] -> g = [1, 2]; up rows [1,1],[2,0] -> u = [3, 2]; down = [[1, 1]]
  const y = swiglu(np.array([[1, 2]]), np.array([[1, 0], [0, 1]]), np.array([[1, 1], [2, 0]]), np.array([[1, 1]]));
  const silu = (v: number): number => v / (1 + Math.exp(-v));
  close(await y.data(), [silu(1) * 3 + silu(2) * 2]);
});

test('RoPE frequencies: theta^(-2i/d), linear and llama3 scaling as transformers computes them', () => {
  close(ropeInvFreq({ headDim: 4, ropeTheta: 100, ropeScaling: { type: 'none' } }), [1, 0.1], 1e-15);
  close(ropeInvFreq({ headDim: 4, ropeTheta: 100, ropeScaling: { type: 'linear', factor: 4 } }), [0.25, 0.025], 1e-15);
  // llama3 (factor 8, low 1, high 4, original 8192; transformers' _compute_llama3_parameters):
  // wavelen 2π/f: short ones (< 2048) kept, long ones (> 8192) divided by 8, between them blended.
  const inv = ropeInvFreq({
    headDim: 8,
    ropeTheta: 500000,
    ropeScaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 },
  });
  const base = [0, 1, 2, 3].map((i) => Math.pow(500000, (-2 * i) / 8));
  const wavelen = base.map((f) => (2 * Math.PI) / f); // 6.28, 167, 4443, 118,000
  assert.ok(wavelen[2] > 2048 && wavelen[2] < 8192 && wavelen[3] > 8192 && wavelen[1] < 2048);
  const smooth = (8192 / wavelen[2] - 1) / (4 - 1);
  close(inv, [base[0], base[1], (1 - smooth) * (base[2] / 8) + smooth * base[2], base[3] / 8], 1e-12);
});

test('applyRope rotates each (i, i + d/2) pair by position·inv_freq', async () => {
  const cfg = { headDim: 4, ropeTheta: 100, ropeScaling: { type: 'none' as const } };
  const { cos, sin } = ropeTables(cfg, [0, 3]);
  // x at positions 0 and 3, one head: [x0, x1, x2, x3] pairs (x0, x2) with freq 1 and (x1, x3) with 0.1.
  const x = np.array([1, 2, 3, 4, 1, 2, 3, 4]).reshape([1, 1, 2, 4]);
  const y = await applyRope(x, cos, sin).data();
  const rot = (a: number, b: number, th: number): [number, number] => [a * Math.cos(th) - b * Math.sin(th), b * Math.cos(th) + a * Math.sin(th)];
  const [a0, a2] = rot(1, 3, 3 * 1);
  const [a1, a3] = rot(2, 4, 3 * 0.1);
  close(y, [1, 2, 3, 4, a0, a1, a2, a3]);
  // Per-row positions (batched tables) give the same result.
  const batched = ropeTables(cfg, [[0, 3]]);
  const y2 = await applyRope(np.array([1, 2, 3, 4, 1, 2, 3, 4]).reshape([1, 1, 2, 4]), batched.cos, batched.sin).data();
  close(y2, y);
});

test('attention: causal softmax(q kᵀ/√d) v with grouped kv heads, computed by hand', async () => {
  // 2 query heads share 1 kv head; T = 2; hd = 2.
  const q = [[[1, 0], [0, 1]], [[2, 0], [1, 1]]]; // [H][T][hd]
  const k = [[1, 0], [0, 2]]; // [S][hd]
  const v = [[1, 2], [3, 4]];
  const out = await attention(
    np.array(q).reshape([1, 2, 2, 2]),
    np.array(k).reshape([1, 1, 2, 2]),
    np.array(v).reshape([1, 1, 2, 2]),
    causalMask(2),
  ).data();
  const expected: number[] = [];
  for (let h = 0; h < 2; h++) {
    for (let t = 0; t < 2; t++) {
      const scores = k.slice(0, t + 1).map((kk) => (q[h][t][0] * kk[0] + q[h][t][1] * kk[1]) / Math.SQRT2);
      const e = scores.map(Math.exp);
      const z = e.reduce((a, b) => a + b, 0);
      for (let i = 0; i < 2; i++) expected.push(e.reduce((acc, w, s) => acc + (w / z) * v[s][i], 0));
    }
  }
  close(out, expected);
  // First position can only see itself: output = v[0] for both heads.
  close([out[0], out[1], out[4], out[5]], [1, 2, 1, 2]);
});

test('masks: causal with a cache offset, packed segments', async () => {
  const m = await causalMask(2, 4).data(); // 2 new queries after 2 cached keys
  assert.deepEqual(Array.from(m), [0, 0, 0, MASKED, 0, 0, 0, 0]);
  const p = await packedCausalMask([0, 0, 1, 1], 1, 4).data();
  assert.deepEqual(Array.from(p), [0, MASKED, MASKED, MASKED, 0, 0, MASKED, MASKED, MASKED, MASKED, 0, MASKED, MASKED, MASKED, 0, 0]);
});

/**
 * Token weights (a sequence standing for c identical ones, samples-merge.ts): the loss, its gradient
 * w.r.t. log π_new and every metric equal those of the batch with the sequence repeated c times,
 * in each length normalisation; weights of 1 are the unweighted loss.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine, np, type Tensor } from '../../src/model/engine.ts';
import { parseLossConfig, type LengthNorm } from '../../src/train/loss-config.ts';
import { lengthNormWeights } from '../../src/train/loss-normalize.ts';
import { BATCH, lossAt, lossInputs, near, type HostBatch } from './loss-batch-fixture.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const DATA_FIELDS = ['oldLp', 'samplingLp', 'advantages', 'mask', 'refLp', 'entropy', 'sequenceLengths'] as const;

/**
 * The repeated batch: each new row copies row `source` of `b` at the positions where `keep` is 1
 * (0 elsewhere: padding), without weights; and the [R·T, R'·T] 0/1 matrix that maps b's flat
 * newLp onto it, so both losses are functions of the same log π_new.
 */
function repeated(b: HostBatch, rows: { source: number; keep: number[] }[]): { batch: HostBatch; select: number[][] } {
  const R = b.mask.length;
  const T = b.mask[0].length;
  const copy = (x: number[][]) => rows.map(({ source, keep }) => x[source].map((v, t) => (keep[t] ? v : 0)));
  const batch: HostBatch = { ...b, newLp: copy(b.newLp) };
  delete batch.tokenWeights;
  for (const f of DATA_FIELDS) if (b[f]) batch[f] = copy(b[f]);
  const select = Array.from({ length: R * T }, () => new Array<number>(rows.length * T).fill(0));
  rows.forEach(({ source, keep }, r) => keep.forEach((k, t) => (select[source * T + t][r * T + t] = k)));
  return { batch, select };
}

/** log π_new of `b` from the flat log π_new of the weighted batch (through `select` when given). */
function logprobsOf(flat: Tensor, T: number, select?: number[][]): Tensor {
  const x = select ? np.matmul(flat, np.array(select)) : flat;
  return x.reshape([x.shape[1] / T, T]);
}

/** Loss, d loss / d log π_new (flat, of the weighted batch's positions), and every metric. */
function evaluate(b: HostBatch, flatLp: number[][], lengthNorm: LengthNorm, select?: number[][]) {
  const T = b.mask[0].length;
  return lossAt((lp) => lossInputs(b, logprobsOf(lp, T, select)), flatLp, parseLossConfig({ lengthNorm, maxCompletionTokens: 4, klBeta: 0.1 }));
}

async function assertSame(weighted: HostBatch, rows: { source: number; keep: number[] }[], what: string): Promise<void> {
  const { batch, select } = repeated(weighted, rows);
  const flatLp = [weighted.newLp.flat()];
  for (const lengthNorm of ['dapo', 'grpo', 'dr_grpo'] as const) {
    const w = await evaluate(weighted, flatLp, lengthNorm);
    const d = await evaluate(batch, flatLp, lengthNorm, select);
    const label = `${what}, ${lengthNorm}`;
    assert.ok(Math.abs(d.loss) > 1e-3, `${label}: the loss is not trivially 0`);
    near(w.loss, d.loss, 1e-6, `${label}: loss`);
    assert.ok(d.grad.some((x) => Math.abs(x) > 1e-3), `${label}: the gradient is not trivially 0`);
    d.grad.forEach((x, i) => near(w.grad[i], x, 1e-6, `${label}: d loss / d log π [${i}]`));
    assert.deepEqual(Object.keys(w.metrics).sort(), Object.keys(d.metrics).sort(), `${label}: metric names`);
    for (const [name, value] of Object.entries(d.metrics)) near(w.metrics[name], value, 1e-6, `${label}: ${name}`);
  }
}

// Old ≠ sampler (importance weights, one capped), a reference (KL), entropies, clipping on both
// sides; rows of different lengths so the modes differ. Column 2 of row 0 is padding.
const ROWS: HostBatch = BATCH;

test('weights [2, 1] equal the batch with the first row repeated: loss, gradient, metrics (dapo, grpo, dr_grpo)', async () => {
  const weighted = {
    ...ROWS,
    tokenWeights: [
      [2, 2, 2],
      [1, 1, 1],
    ],
  };
  const all = [1, 1, 1];
  await assertSame(weighted, [{ source: 0, keep: all }, { source: 0, keep: all }, { source: 1, keep: all }], 'rows');
  // With explicit per-sequence lengths too.
  const lengths = [
    [2, 2, 2],
    [3, 3, 3],
  ];
  await assertSame({ ...weighted, sequenceLengths: lengths }, [{ source: 0, keep: all }, { source: 0, keep: all }, { source: 1, keep: all }], 'rows with lengths');
});

test('a packed row: each sequence weighted at its own positions equals the repeated sequences', async () => {
  // One row: padding, sequence A (2 tokens, weight 3), sequence B (2 tokens, weight 1).
  const weighted: HostBatch = {
    mask: [[0, 1, 1, 1, 1]],
    newLp: [[-9, -1.0, -0.3, -2.0, -0.6]],
    oldLp: [[0, -1.3, -0.2, -1.6, -0.6]],
    samplingLp: [[0, -1.2, -1.0, -2.4, -0.4]],
    advantages: [[0, 1, 1, -0.5, -0.5]],
    refLp: [[0, -0.9, -0.4, -2.1, -0.5]],
    entropy: [[7, 0.4, 0.9, 1.1, 0.3]],
    sequenceLengths: [[0, 2, 2, 2, 2]],
    tokenWeights: [[0, 3, 3, 1, 1]],
  };
  const onlyA = [0, 1, 1, 0, 0];
  await assertSame(weighted, [{ source: 0, keep: [1, 1, 1, 1, 1] }, { source: 0, keep: onlyA }, { source: 0, keep: onlyA }], 'packed');
});

test('weights of 1 are the unweighted loss; length weights by hand', async () => {
  const ones = { ...ROWS, tokenWeights: ROWS.mask.map((r) => r.map(() => 1)) };
  for (const lengthNorm of ['dapo', 'grpo', 'dr_grpo'] as const) {
    const a = await evaluate(ones, [ROWS.newLp.flat()], lengthNorm);
    const b = await evaluate(ROWS, [ROWS.newLp.flat()], lengthNorm);
    near(a.loss, b.loss, 1e-7, `${lengthNorm} loss`);
    a.grad.forEach((x, i) => near(x, b.grad[i], 1e-7, `${lengthNorm} grad [${i}]`));
    for (const [name, value] of Object.entries(b.metrics)) near(a.metrics[name], value, 1e-7, `${lengthNorm} ${name}`);
  }
  // Row 0 (2 tokens) weight 2, row 1 (3 tokens) weight 1: 7 weighted tokens, 3 weighted sequences.
  const mask = [
    [1, 1, 0],
    [1, 1, 1],
  ];
  const c = [
    [2, 2, 2],
    [1, 1, 1],
  ];
  const weights = async (lengthNorm: LengthNorm) =>
    Array.from(await lengthNormWeights(np.array(mask), { lengthNorm, maxCompletionTokens: 4 }, undefined, np.array(c)).data(), Number);
  (await weights('dapo')).forEach((w, i) => near(w, [2 / 7, 2 / 7, 0, 1 / 7, 1 / 7, 1 / 7][i], 1e-7, `dapo w[${i}]`));
  (await weights('grpo')).forEach((w, i) => near(w, [1 / 3, 1 / 3, 0, 1 / 9, 1 / 9, 1 / 9][i], 1e-7, `grpo w[${i}]`));
  (await weights('dr_grpo')).forEach((w, i) => near(w, [2 / 12, 2 / 12, 0, 1 / 12, 1 / 12, 1 / 12][i], 1e-7, `dr_grpo w[${i}]`));
});

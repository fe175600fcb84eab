import assert from 'node:assert/strict';
import { test } from 'node:test';
import { meanCi, RunningMean } from '../../src/core/stats.ts';

test('meanCi: hand-computed mean, sample std and normal 95 % interval', () => {
  const r = meanCi([1, 2, 3, 4]);
  assert.equal(r.n, 4);
  assert.equal(r.mean, 2.5);
  assert.ok(Math.abs(r.std - Math.sqrt(5 / 3)) < 1e-15);
  const half = (1.959963984540054 * Math.sqrt(5 / 3)) / 2;
  assert.ok(Math.abs(r.ci95[0] - (2.5 - half)) < 1e-15 && Math.abs(r.ci95[1] - (2.5 + half)) < 1e-15);
  assert.deepEqual(meanCi([7]), { mean: 7, ci95: [7, 7], std: 0, n: 1 });
  const empty = meanCi([]);
  assert.equal(empty.n, 0);
  assert.ok(Number.isNaN(empty.mean) && Number.isNaN(empty.std));
});

test('RunningMean streams the same figures, and keeps the spread far from 0 (where a sum of squares loses it)', () => {
  const stream = new RunningMean();
  const values: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const x = 1e9 + (i % 7) - 3;
    values.push(x);
    stream.add(x);
  }
  assert.equal(stream.count, 1000);
  const streamed = stream.result();
  assert.deepEqual(streamed, meanCi(values));
  // Two-pass reference: deviations from the exact mean.
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const std = Math.sqrt(values.reduce((a, x) => a + (x - mean) ** 2, 0) / (values.length - 1));
  assert.ok(Math.abs(streamed.mean - mean) < 1e-6);
  assert.ok(Math.abs(streamed.std - std) < 1e-9 * std, `${streamed.std} vs ${std}`);
});

test('the same values in another order give the same mean where their sums are exact (halves)', () => {
  const values = Array.from({ length: 2000 }, (_, i) => [-1, 0, 1, 1.5, -1, -1, 0.5][(i * 7919) % 7]);
  const reversed = [...values].reverse();
  assert.equal(meanCi(values).mean, meanCi(reversed).mean);
  assert.equal(meanCi(values).mean, values.reduce((a, b) => a + b, 0) / values.length);
});

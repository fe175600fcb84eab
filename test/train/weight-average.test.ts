/** Tail averaging of the RL weights: the first averaged step, and the running mean against the plain one. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HostParams } from '../../src/model/params.ts';
import { averageFirstStep, WeightAverage } from '../../src/train/weight-average.ts';

function weights(a: number[], b: number[]): HostParams {
  return { a: { shape: [a.length], data: Float32Array.from(a) }, b: { shape: [2, 1], data: Float32Array.from(b) } };
}

test('the first averaged step: ⌊from × steps⌋, at least step 1 and at most the last; null when off', () => {
  assert.equal(averageFirstStep(0.6, 250), 150);
  assert.equal(averageFirstStep(0.6, 3), 1);
  assert.equal(averageFirstStep(0, 10), 1);
  assert.equal(averageFirstStep(1, 10), 10);
  assert.equal(averageFirstStep(null, 250), null);
});

test('the running mean equals the plain mean of the snapshots, which it does not keep', () => {
  const avg = new WeightAverage(4);
  assert.equal(avg.params, null);
  const first = weights([1, 2, 3], [10, -10]);
  avg.add(first);
  first.a.data[0] = 100; // the average copied the first snapshot
  avg.add(weights([3, 2, 0], [20, 0]));
  avg.add(weights([5, 8, 0], [-3, 4]));
  assert.equal(avg.count, 3);
  assert.equal(avg.firstStep, 4);
  assert.deepEqual([...avg.params!.a.data], [3, 4, 1]);
  assert.deepEqual([...avg.params!.b.data].map((x) => Number(x.toFixed(5))), [9, -2]);
  assert.deepEqual(avg.params!.b.shape, [2, 1]);
});

test('a restored average continues as if never interrupted; a mismatched snapshot is refused', () => {
  const snapshots = [weights([1, 0, 0], [0, 0]), weights([0, 1, 0], [1, 1]), weights([0, 0, 1], [2, 5])];
  const whole = new WeightAverage(1);
  for (const s of snapshots) whole.add(s);
  const part = new WeightAverage(1);
  part.add(snapshots[0]);
  part.add(snapshots[1]);
  const restored = new WeightAverage(1, { params: structuredClone(part.params!), count: part.count });
  restored.add(snapshots[2]);
  assert.deepEqual(restored.params, whole.params);
  assert.throws(() => restored.add({ a: { shape: [2], data: new Float32Array(2) }, b: snapshots[0].b }), /"a" does not match/);
  assert.throws(() => new WeightAverage(1, { params: whole.params!, count: 0 }), /count >= 1/);
});

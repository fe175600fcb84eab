/** Mini-batches: a shuffled split into nearly equal parts; samples of one unit stay together. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../src/core/random.ts';
import { miniBatches } from '../../src/train/mini-batches.ts';

test('one-sample units: n slices of N/n samples, every sample once', () => {
  const samples = Array.from({ length: 10 }, (_, i) => i);
  const parts = miniBatches(samples, 3, new Rng(1, 2));
  assert.deepEqual(parts.map((p) => p.length), [3, 3, 4]);
  assert.deepEqual(parts.flat().sort((a, b) => a - b), samples);
  assert.notDeepEqual(parts.flat(), samples, 'shuffled');
});

test('samples of one unit stay in one mini-batch, and the parts stay near equal', () => {
  // 8 decisions of 8 answers each: 64 samples, 4 parts of 2 decisions.
  const samples = Array.from({ length: 64 }, (_, i) => ({ decision: `d${Math.floor(i / 8)}`, i }));
  const parts = miniBatches(samples, 4, new Rng(3, 4), (s) => s.decision);
  assert.deepEqual(parts.map((p) => p.length), [16, 16, 16, 16]);
  for (const part of parts) {
    const decisions = new Set(part.map((s) => s.decision));
    assert.equal(decisions.size, 2);
    for (const d of decisions) assert.equal(part.filter((s) => s.decision === d).length, 8, `${d} whole`);
  }
  assert.equal(parts.flat().length, 64);
  // Fewer units than parts: as many parts as units; units of their own where the key is undefined.
  const few = miniBatches([{ k: 'a' }, { k: 'a' }, { k: undefined }], 4, new Rng(5, 6), (s) => s.k);
  assert.deepEqual(few.map((p) => p.length).sort(), [1, 2]);
});

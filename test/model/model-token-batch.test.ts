import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTokenBatch, completionValues } from '../../src/model/token-batch.ts';

test('one row per sample: inputs, next-token targets, mask on completion targets, right padding', () => {
  const b = buildTokenBatch([{ promptIds: [10, 11], completionIds: [12, 13] }, { promptIds: [20], completionIds: [21] }], { padId: 0 });
  assert.equal(b.batch, 2);
  assert.equal(b.length, 3); // longest sequence 4 tokens -> 3 positions
  assert.deepEqual(Array.from(b.inputIds), [10, 11, 12, 20, 0, 0]);
  assert.deepEqual(Array.from(b.targetIds), [11, 12, 13, 21, 0, 0]);
  assert.deepEqual(Array.from(b.mask), [0, 1, 1, 1, 0, 0]);
  assert.deepEqual(Array.from(b.positions), [0, 1, 2, 0, 1, 2]);
  assert.equal(b.segmentIds, null);
  // completionValues reads each completion token's value back in order.
  assert.deepEqual(completionValues(b, [0, 1, 2, 3, 4, 5]), [[1, 2], [3]]);
});

test('packing places several sequences in a row with their own positions and segments', () => {
  const samples = [
    { promptIds: [1, 2], completionIds: [3] }, // 2 positions
    { promptIds: [4, 5, 6], completionIds: [7, 8] }, // 4 positions
    { promptIds: [9], completionIds: [10] }, // 1 position
  ];
  const b = buildTokenBatch(samples, { pack: true, length: 6, padId: 0 });
  assert.equal(b.batch, 2); // longest first: [4 + 2] then [1]
  assert.deepEqual(Array.from(b.inputIds), [4, 5, 6, 7, 1, 2, 9, 0, 0, 0, 0, 0]);
  assert.deepEqual(Array.from(b.targetIds), [5, 6, 7, 8, 2, 3, 10, 0, 0, 0, 0, 0]);
  assert.deepEqual(Array.from(b.mask), [0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0]);
  assert.deepEqual(Array.from(b.positions), [0, 1, 2, 3, 0, 1, 0, 1, 2, 3, 4, 5]);
  assert.deepEqual(Array.from(b.segmentIds!), [0, 0, 0, 0, 1, 1, 0, -1, -1, -1, -1, -1]);
  assert.deepEqual(completionValues(b, Array.from({ length: 12 }, (_, i) => i)), [[5], [2, 3], [6]]);
});

test('fixed shapes: length rounded up to a multiple, empty rows added', () => {
  const b = buildTokenBatch([{ promptIds: [1], completionIds: [2, 3] }], { multipleOf: 8, rows: 3 });
  assert.equal(b.length, 8);
  assert.equal(b.batch, 3);
  assert.equal(b.mask.reduce((a, v) => a + v, 0), 2);
});

test('bad samples and sizes are refused', () => {
  assert.throws(() => buildTokenBatch([]), /no samples/);
  assert.throws(() => buildTokenBatch([{ promptIds: [], completionIds: [1] }]), /empty prompt/);
  assert.throws(() => buildTokenBatch([{ promptIds: [1], completionIds: [] }]), /empty completion/);
  assert.throws(() => buildTokenBatch([{ promptIds: [1], completionIds: [-2] }]), /token id -2/);
  assert.throws(() => buildTokenBatch([{ promptIds: [1, 2, 3], completionIds: [4] }], { length: 2 }), /needs 3 positions/);
  assert.throws(() => buildTokenBatch([{ promptIds: [1], completionIds: [2] }, { promptIds: [1], completionIds: [2] }], { rows: 1 }), /need 2 rows/);
});

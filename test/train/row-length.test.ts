/** The measured row length: 99 % of the demonstrated episodes fit, in multiples of 32, capped by the context. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { measuredRowLengths } from '../../src/train/row-length.ts';
import type { LayoutSample } from '../../src/train/rl-batch.ts';

const systemTurn = [7, 7, 7, 7, 7, 7, 7, 7, 7, 7];

function demo(length: number, first = 1): LayoutSample {
  const tokens = [...systemTurn, ...Array.from({ length: length - systemTurn.length }, (_, i) => first + i)];
  return { tokens, lossMask: tokens.map((_, i) => (i === 0 ? 0 : 1)) };
}

test('99 of 100 episodes fit; the outlier is left to the too-long count', () => {
  const demos = [...Array.from({ length: 99 }, (_, i) => demo(100 + i, 1000 * (i + 1))), demo(900)];
  // Longest of the 99: 198 tokens → 197 row inputs → 224; behind the shared 10-token system turn 187 → 192.
  assert.deepEqual(measuredRowLengths(demos, 1024), { warmStart: 224, rl: 192 });
});

test('short episodes get at least 64; the model context caps it', () => {
  assert.deepEqual(measuredRowLengths([demo(20), demo(30, 5)], 1024), { warmStart: 64, rl: 64 });
  assert.deepEqual(measuredRowLengths([demo(2000), demo(2000, 5)], 512), { warmStart: 512, rl: 512 });
  assert.throws(() => measuredRowLengths([], 512), /no demonstrations/);
});

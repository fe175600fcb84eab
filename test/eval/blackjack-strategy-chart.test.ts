/** The Blackjack strategy chart: optimal moves give no bold cell; each difference is priced by the solver's action values. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blackjackStrategyChart } from '../../src/eval/blackjack-strategy-chart.ts';
import { allBlackjackDecisions, blackjackStateKey, solveBlackjack } from '../../src/envs/blackjack/solver.ts';
import type { TableMove } from '../../src/train/greedy-table-value.ts';

const rules = { natural: false, sab: false };

function optimalMoves(): Record<string, TableMove> {
  const solution = solveBlackjack(rules);
  const moves: Record<string, TableMove> = {};
  for (const d of allBlackjackDecisions()) if (!d.natural) moves[blackjackStateKey(d)] = solution.optimalMove(d);
  return moves;
}

test('the optimal table has no differences; its chart has 28 hands × 10 dealer cards', () => {
  const chart = blackjackStrategyChart(optimalMoves(), rules);
  assert.equal(chart.states, 280);
  assert.deepEqual(chart.differences, []);
  const rows = chart.markdown.split('\n');
  assert.equal(rows.length, 2 + 28);
  assert.equal(rows[0], '| hand | A | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 |');
  // Basic strategy: hard 20 always sticks, hard 8 always hits.
  assert.match(rows.find((r) => r.startsWith('| hard 20 '))!, /^\| hard 20 (\| S ){10}\|$/);
  assert.match(rows.find((r) => r.startsWith('| hard 8 '))!, /^\| hard 8 (\| H ){10}\|$/);
  assert.equal(chart.markdown.includes('**'), false);
});

test('a changed move is bold and costs the gap between the two action values', () => {
  const moves = optimalMoves();
  moves['13/2/hard'] = moves['13/2/hard'] === 'hit' ? 'stick' : 'hit';
  moves['20/10/hard'] = 'invalid';
  const chart = blackjackStrategyChart(moves, rules);
  assert.equal(chart.differences.length, 2);
  const values = solveBlackjack(rules).actionValues({ playerSum: 13, dealerCard: 2, usableAce: false, natural: false });
  const gap = Math.abs(values.hit.expectedReturn - values.stick.expectedReturn);
  const d13 = chart.differences.find((d) => d.key === '13/2/hard')!;
  assert.ok(Math.abs(d13.cost - gap) < 1e-12);
  assert.ok(d13.cost > 0);
  // An invalid answer ends the hand with the penalty (−1): it costs the optimal value + 1.
  const v20 = solveBlackjack(rules).actionValues({ playerSum: 20, dealerCard: 10, usableAce: false, natural: false });
  assert.ok(Math.abs(chart.differences.find((d) => d.key === '20/10/hard')!.cost - (v20.stick.expectedReturn + 1)) < 1e-12);
  assert.match(chart.markdown, /\| hard 20 (\| S ){9}\| \*\*×\*\* \|/);
  delete moves['4/1/hard'];
  assert.throws(() => blackjackStrategyChart(moves, rules), /no entry for 4\/1\/hard/);
});

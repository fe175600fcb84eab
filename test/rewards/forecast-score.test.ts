/** Scoring report answers: rules by kind, against outcome or oracle, worst loss for missing/malformed. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ReportQuestion } from '../../src/envs/env.ts';
import { readAnswer } from '../../src/rewards/forecast-answer.ts';
import { scoreAnswer, worstLoss } from '../../src/rewards/forecast-score.ts';

const close = (actual: number, expected: number, tol = 1e-9) => assert.ok(Math.abs(actual - expected) <= tol, `${actual} vs ${expected}`);

const win: ReportQuestion = { name: 'p_win', kind: 'probability', text: 'p' };
const state: ReportQuestion = { name: 'p_state', kind: 'choice', options: ['A', 'B'], text: 's' };
const demand: ReportQuestion = { name: 'demand_quantile', kind: 'quantile', level: 0.8, range: [0, 30], text: 'q' };

test('probability: Brier against the outcome and excess Brier against the oracle', () => {
  assert.deepEqual(scoreAnswer(win, 0.7, { against: 'outcome', outcome: 1 }, 'brier').status, 'ok');
  close(scoreAnswer(win, 0.7, { against: 'outcome', outcome: 1 }, 'brier').loss, 0.09);
  // (0.7 − 0.6)²
  close(scoreAnswer(win, 0.7, { against: 'oracle', target: 0.6 }, 'brier').loss, 0.01);
  close(scoreAnswer(win, 0.6, { against: 'oracle', target: 0.6 }, 'brier').loss, 0);
  // KL(0.8 ‖ 0.5) = 0.8 ln 1.6 + 0.2 ln 0.4
  close(scoreAnswer(win, 0.5, { against: 'oracle', target: 0.8 }, 'log').loss, 0.8 * Math.log(1.6) + 0.2 * Math.log(0.4));
});

test('missing and malformed answers get the worst loss and say why', () => {
  assert.deepEqual(scoreAnswer(win, undefined, { against: 'outcome', outcome: 0 }, 'brier'), { loss: 1, status: 'missing' });
  assert.deepEqual(scoreAnswer(win, 1.5, { against: 'outcome', outcome: 0 }, 'brier'), { loss: 1, status: 'malformed' });
  assert.deepEqual(scoreAnswer(win, '0.3', { against: 'outcome', outcome: 0 }, 'brier'), { loss: 1, status: 'malformed' });
  close(scoreAnswer(win, null, { against: 'outcome', outcome: 0 }, 'log').loss, -Math.log(1e-4));
  // against the oracle, minus the oracle's own expected loss 0.6·0.4
  close(scoreAnswer(win, undefined, { against: 'oracle', target: 0.6 }, 'brier').loss, 1 - 0.24);
  assert.equal(worstLoss(state, 'brier'), 2);
  assert.equal(worstLoss(demand, 'log'), 24);
});

test('choice: multi-class Brier and log, probabilities must cover the options and sum to 1', () => {
  close(scoreAnswer(state, { A: 0.5, B: 0.5 }, { against: 'outcome', outcome: 'A' }, 'brier').loss, 0.5);
  close(scoreAnswer(state, { A: 0.5, B: 0.5 }, { against: 'outcome', outcome: 'B' }, 'log').loss, Math.LN2);
  // Σ(a − p*)² = 2·0.1²
  close(scoreAnswer(state, { A: 0.7, B: 0.3 }, { against: 'oracle', target: { A: 0.6, B: 0.4 } }, 'brier').loss, 0.02);
  assert.equal(scoreAnswer(state, { A: 0.5, B: 0.4 }, { against: 'outcome', outcome: 'A' }, 'brier').status, 'malformed');
  assert.equal(scoreAnswer(state, { A: 0.5, C: 0.5 }, { against: 'outcome', outcome: 'A' }, 'brier').status, 'malformed');
  assert.equal(scoreAnswer(state, { A: 1 }, { against: 'outcome', outcome: 'A' }, 'brier').status, 'malformed');
  assert.equal(scoreAnswer(state, [0.5, 0.5], { against: 'outcome', outcome: 'A' }, 'brier').loss, 2);
  // within 0.01 of 1: renormalised
  assert.deepEqual(readAnswer(state, { A: 0.6, B: 0.405 }), { ok: true, value: { A: 0.6 / 1.005, B: 0.405 / 1.005 } });
  assert.throws(() => scoreAnswer(state, { A: 1, B: 0 }, { against: 'outcome', outcome: 'C' }, 'brier'), /'C' is not an option|"C" is not an option/);
});

test('quantile: pinball against the outcome or the oracle quantile; out of range is malformed', () => {
  close(scoreAnswer(demand, 10, { against: 'outcome', outcome: 14 }, 'brier').loss, 3.2);
  close(scoreAnswer(demand, 10, { against: 'oracle', target: 12 }, 'log').loss, 1.6);
  assert.deepEqual(scoreAnswer(demand, 31, { against: 'outcome', outcome: 14 }, 'brier'), { loss: 24, status: 'malformed' });
});

/** Proper scoring rules against hand-computed values. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  brierLoss,
  LOG_CLIP,
  logLoss,
  multiBrierLoss,
  multiLogLoss,
  pinballLoss,
  WORST_LOG,
  worstPinballLoss,
} from '../../src/rewards/scoring-rules.ts';

const close = (actual: number, expected: number, tol = 1e-9) => assert.ok(Math.abs(actual - expected) <= tol, `${actual} vs ${expected}`);

test('binary Brier: (a − y)² on outcomes, its expectation on a soft target', () => {
  close(brierLoss(0.7, 1), 0.09);
  close(brierLoss(0.7, 0), 0.49);
  close(brierLoss(0, 1), 1);
  // 0.6·0.3² + 0.4·0.7² = 0.054 + 0.196
  close(brierLoss(0.7, 0.6), 0.25);
  // at a = p the expected loss is p(1 − p)
  close(brierLoss(0.7, 0.7), 0.21);
});

test('binary log loss, clipped at 1e-4', () => {
  close(logLoss(0.8, 1), 0.2231435513142097);
  close(logLoss(0.8, 0), 1.6094379124341003);
  close(LOG_CLIP, 1e-4);
  close(logLoss(1, 0), 9.210340371976182);
  close(WORST_LOG, 9.210340371976182);
  // soft target 0.8, answer 0.5: ln 2
  close(logLoss(0.5, 0.8), Math.LN2);
});

test('multi-class Brier and log loss', () => {
  // 0.5² + 0.3² + 0.2² with the first option realised
  close(multiBrierLoss([0.5, 0.3, 0.2], [1, 0, 0]), 0.38);
  close(multiBrierLoss([0, 1, 0], [1, 0, 0]), 2);
  close(multiBrierLoss([0.2, 0.8], [0.2, 0.8]), 1 - 2 * (0.04 + 0.64) + 0.68);
  close(multiLogLoss([0.5, 0.3, 0.2], [0, 1, 0]), 1.2039728043259361);
  close(multiLogLoss([0, 1], [1, 0]), WORST_LOG);
});

test('pinball loss charges τ below and 1 − τ above', () => {
  close(pinballLoss(10, 14, 0.8), 3.2);
  close(pinballLoss(10, 6, 0.8), 0.8);
  close(pinballLoss(10, 10, 0.3), 0);
  close(worstPinballLoss(0.8, [0, 30]), 24);
  close(worstPinballLoss(0.25, [2, 6]), 3);
});

/**
 * Proper scoring rules, as losses (lower is better; 0 is a perfect forecast). Each takes the target
 * `y` either as the realised outcome (0/1, a one-hot option) or as the oracle's probabilities: with
 * soft y the loss is the rule's expectation under y, so both readings share one minimiser (a = y).
 */

/** Log scores clip probabilities to [LOG_CLIP, 1 − LOG_CLIP], so the worst log loss is −ln(1e-4) ≈ 9.21. */
export const LOG_CLIP = 1e-4;

const clip = (p: number): number => Math.min(1 - LOG_CLIP, Math.max(LOG_CLIP, p));

/** Binary Brier: y·(1 − a)² + (1 − y)·a², which is (a − y)² for y ∈ {0, 1}. Worst 1. */
export function brierLoss(a: number, y: number): number {
  return y * (1 - a) ** 2 + (1 - y) * a ** 2;
}

/** Binary log loss: −[y·ln a + (1 − y)·ln(1 − a)], a clipped. Worst −ln(LOG_CLIP). */
export function logLoss(a: number, y: number): number {
  return -(y * Math.log(clip(a)) + (1 - y) * Math.log(clip(1 - a)));
}

/** Multi-class Brier: Σ_k y_k·Σ_j (a_j − 1[j = k])² = 1 − 2·Σ y_k·a_k + Σ a_k². Worst 2. */
export function multiBrierLoss(a: readonly number[], y: readonly number[]): number {
  let cross = 0;
  let squares = 0;
  let mass = 0;
  for (let k = 0; k < a.length; k++) {
    cross += y[k] * a[k];
    squares += a[k] ** 2;
    mass += y[k];
  }
  return mass * (1 + squares) - 2 * cross;
}

/** Multi-class log loss (cross-entropy): −Σ y_k·ln a_k, a clipped. Worst −ln(LOG_CLIP). */
export function multiLogLoss(a: readonly number[], y: readonly number[]): number {
  let loss = 0;
  for (let k = 0; k < a.length; k++) if (y[k] > 0) loss -= y[k] * Math.log(clip(a[k]));
  return loss;
}

/** Pinball (quantile) loss of forecast q at level τ when y happens: max(τ·(y − q), (τ − 1)·(y − q)). */
export function pinballLoss(q: number, y: number, tau: number): number {
  const d = y - q;
  return Math.max(tau * d, (tau - 1) * d);
}

/** The largest pinball loss when forecast and outcome both lie in [lo, hi]: max(τ, 1 − τ)·(hi − lo). */
export function worstPinballLoss(tau: number, [lo, hi]: readonly [number, number]): number {
  return Math.max(tau, 1 - tau) * (hi - lo);
}

export const WORST_BRIER = 1;
export const WORST_MULTI_BRIER = 2;
export const WORST_LOG = -Math.log(LOG_CLIP);

/** Mean, standard deviation and ties: the few statistics every estimator shares. */

/**
 * `sample`: √(Σ(x − μ)² / (n − 1)), Bessel-corrected; what torch.std computes by default, so what
 * TRL's GRPOTrainer and verl's compute_grpo_outcome_advantage divide by.
 * `population`: √(Σ(x − μ)² / n); what the Alea seed uses (`std(unbiased=False)`).
 */
export type StdKind = 'sample' | 'population';

/** μ = Σx / n; 0 for no values (never NaN). */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** σ of `xs`; 0 where it is undefined (no values, or one value with the sample estimator). */
export function std(xs: readonly number[], kind: StdKind): number {
  const n = xs.length;
  const dof = kind === 'sample' ? n - 1 : n;
  if (dof <= 0) return 0;
  const mu = mean(xs);
  let ss = 0;
  for (const x of xs) ss += (x - mu) ** 2;
  return Math.sqrt(ss / dof);
}

/**
 * Values closer than this (relative to their magnitude, at least 1) count as equal. Rewards that
 * are mathematically equal but summed differently (0.1 + 0.2 vs 0.3) differ by ~1e-17.
 */
export const TIE_TOLERANCE = 1e-9;

/**
 * True when `xs` cannot rank its members: fewer than two values, or all equal within
 * TIE_TOLERANCE. Such a set has zero variance; the estimators give it advantage 0 exactly rather
 * than divide float noise by a near-zero σ (with ε = 0, [0.1, 0.1, 0.1] would give −0.82 each).
 */
export function isTied(xs: readonly number[]): boolean {
  if (xs.length < 2) return true;
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of xs) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return hi - lo <= TIE_TOLERANCE * Math.max(1, Math.abs(lo), Math.abs(hi));
}

/**
 * KL to a frozen reference policy, per token, from tokens sampled by π_new, as a loss term.
 *
 *   k3 = exp(ref − new) − (ref − new) − 1   (Schulman's estimator; DeepSeekMath GRPO, TRL)
 *   k2 = ½ (new − ref)²
 *
 * k3's value is an unbiased, low-variance estimate of KL(π_new ‖ π_ref) (E_new[π_ref/π_new] = 1),
 * but as a loss its gradient in log π_new is 1 − π_ref/π_new, whose expectation over π_new's
 * samples, Σ_a (π_new − π_ref) ∇log π_new, is the gradient of the forward KL(π_ref ‖ π_new); k2's
 * gradient (new − ref) ∇log π_new has the expectation of the reverse KL(π_new ‖ π_ref)'s gradient
 * (Σ_a π_new ∇log π_new = 0). The two agree near the reference and part far from it: forward KL's
 * pull on a two-way choice with a 50/50 reference tends to β/2 however sure the policy is, so an
 * action worth ΔA more settles where π(1 − π)ΔA = β(π − ½), never surer than ~1 − β/(2ΔA) (ΔA 1.5
 * at β 1: π ≈ 0.77); reverse KL's settles at π_ref·exp(A/β) (0.82 there, 0.95 at ΔA 3), sure where
 * the advantage is large and soft only where it is small.
 * The k3 of x = new − old is also the "approx KL" metric between policy versions.
 * Consumes its arguments.
 */
import { np, type Tensor } from '../model/engine.ts';

/** k3 of a log-ratio x: exp(x) − x − 1, per element. */
export function k3(logRatio: Tensor): Tensor {
  return np.exp(logRatio.ref).sub(logRatio).sub(1);
}

/**
 * The log-ratio x* > 0 where k3 reaches `max`: exp(x*) − x* − 1 = max (Newton from above, where
 * k3 is convex and increasing, so it converges monotonically).
 */
export function k3Inverse(max: number): number {
  if (!(max > 0)) throw new RangeError(`k3Inverse: max must be > 0, got ${max}`);
  let x = Math.log(max + 1) + 1;
  for (let i = 0; i < 100; i++) {
    const step = (Math.exp(x) - x - 1 - max) / (Math.exp(x) - 1);
    x -= step;
    if (Math.abs(step) < 1e-12) break;
  }
  return x;
}

export const KL_ESTIMATORS = ['k3', 'k2'] as const;
export type KlEstimator = (typeof KL_ESTIMATORS)[number];

/**
 * The KL term per token [B, T] with `estimator` (k3 below; k2 = ½x², past |x| = √(2·max) continued
 * along its tangent, i.e. the Huber loss of the log-ratio, so a token pulls with at most √(2·max)).
 */
export function klToReference(refLogprobs: Tensor, newLogprobs: Tensor, mask: Tensor, max: number | null = null, estimator: KlEstimator = 'k3'): Tensor {
  if (estimator === 'k3') return k3ToReference(refLogprobs, newLogprobs, mask, max);
  const x = refLogprobs.sub(newLogprobs).mul(mask);
  if (max === null) return x.ref.mul(x).mul(0.5);
  const edge = Math.sqrt(2 * max);
  const c = np.clip(x.ref, -edge, edge);
  // ½c² + c(x − c): ½x² inside the edges, linear with slope ±edge past them.
  return x.sub(c.ref.mul(0.5)).mul(c);
}

/**
 * k3 estimate of KL(π_new ‖ π_ref) per token [B, T]. `mask` zeroes the log-ratio where it is 0
 * (padding), so the estimate is exactly 0 there whatever the padded values are.
 *
 * `max` bounds each token's gradient: a token the policy made far less likely than the reference
 * did, sampled anyway, brings 1 − π_ref/π_new, in the thousands (newsvendor's digits). Past the
 * log-ratio x* where k3 reaches `max`, the estimate continues along its tangent,
 *
 *   k3(x*) + (exp(x*) − 1)(x − x*),   written  exp(c)(1 + x − c) − x − 1  with c = min(x, x*),
 *
 * so such a token pulls with exp(x*) − 1 (12.6 at max 10) and never with nothing: verl's
 * `low_var_kl` clamps the value at 10 instead, which removes the pull back of exactly the tokens
 * that left the reference furthest (a dense hmm run that collapsed into one illegal answer stayed
 * there). The other side (π_new ≫ π_ref, x ≪ 0) is already linear, slope −1 + exp(x) ≥ −1, and
 * is left as it is.
 */
function k3ToReference(refLogprobs: Tensor, newLogprobs: Tensor, mask: Tensor, max: number | null): Tensor {
  const x = refLogprobs.sub(newLogprobs).mul(mask);
  if (max === null) return k3(x);
  const c = np.minimum(x.ref, k3Inverse(max));
  return np.exp(c.ref).mul(c.neg().add(x.ref).add(1)).sub(x).sub(1);
}

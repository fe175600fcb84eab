/**
 * KL to a frozen reference policy, per token, with Schulman's k3 estimator (DeepSeekMath GRPO):
 *
 *   k3 = exp(ref − new) − (ref − new) − 1   ≥ 0, = 0 iff ref = new,
 *
 * an unbiased, low-variance estimate of KL(π_new ‖ π_ref) from tokens sampled by π_new
 * (E_new[π_ref/π_new] = 1). Its gradient in log π_new is 1 − π_ref/π_new.
 * The same estimator with x = new − old is the "approx KL" metric between policy versions.
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
export function klToReference(refLogprobs: Tensor, newLogprobs: Tensor, mask: Tensor, max: number | null = null): Tensor {
  const x = refLogprobs.sub(newLogprobs).mul(mask);
  if (max === null) return k3(x);
  const c = np.minimum(x.ref, k3Inverse(max));
  return np.exp(c.ref).mul(c.neg().add(x.ref).add(1)).sub(x).sub(1);
}

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
 * k3 estimate of KL(π_new ‖ π_ref) per token [B, T]. `mask` zeroes the log-ratio where it is 0
 * (padding), so the estimate is exactly 0 there whatever the padded values are. `max` clamps each
 * token's value (verl's `low_var_kl` clamps at 10): a token the policy made far less likely than
 * the reference did, sampled anyway, would otherwise bring a gradient of 1 − π_ref/π_new in the
 * thousands; past the clamp it brings none.
 */
export function klToReference(refLogprobs: Tensor, newLogprobs: Tensor, mask: Tensor, max: number | null = null): Tensor {
  const kl = k3(refLogprobs.sub(newLogprobs).mul(mask));
  return max === null ? kl : np.minimum(kl, max);
}

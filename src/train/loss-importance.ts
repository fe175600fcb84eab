/**
 * Truncated importance sampling for a sampler that is not the policy the ratio is taken against
 * (an inference server with its own numerics, or an older version in asynchronous training):
 *
 *   w_t = min(π_old(t) / π_sampler(t), C)
 *
 * multiplies token t's policy loss (Yao et al. 2025, "Your efficient RL framework secretly brings
 * you off-policy RL training"; verl's `tis_imp_ratio_cap`). The cap C bounds the variance a rare
 * token can add. Both logprobs are recorded data: w carries no gradient. Consumes its arguments.
 */
import { lax, np, type Tensor } from '../model/engine.ts';
import { indicator } from './loss-policy.ts';

export interface ImportanceWeight {
  /** w_t [B, T]. */
  weight: Tensor;
  /** 1 where π_old / π_sampler exceeded the cap, else 0 [B, T]. */
  capped: Tensor;
}

/** `logRatio` = log π_old − log π_sampler per token, zeroed where the mask is 0. */
export function truncatedImportanceWeight(logRatio: Tensor, cap: number): ImportanceWeight {
  const w = np.exp(lax.stopGradient(logRatio));
  const capped = indicator(w.ref.greater(cap));
  return { weight: np.minimum(w, cap), capped };
}

/**
 * The per-token policy-gradient terms (DESIGN rule 6), before masking and length normalisation.
 * Both take the log-ratio x = log π_new − log π_old per token, already zeroed where the mask is 0
 * (padding may hold anything, and exp of it must stay finite), so r = exp(x) is 1 there.
 * Every function consumes its Tensor arguments (jax-js convention).
 */
import { lax, np, type Tensor } from '../model/engine.ts';

export interface PolicyTerm {
  /** Per-token loss [B, T]; its gradient is the policy gradient. */
  loss: Tensor;
  /** r = π_new / π_old per token [B, T]. */
  ratio: Tensor;
  /** 1 where the lower clip bound took effect, else 0 [B, T] (no gradient). */
  clippedLow: Tensor;
  /** 1 where the upper clip bound took effect, else 0 [B, T] (no gradient). */
  clippedHigh: Tensor;
}

export interface ClipRange {
  /** r is clipped at 1 − clipLow below and 1 + clipHigh above. */
  clipLow: number;
  clipHigh: number;
}

/** 1.0 where `condition` holds, 0.0 elsewhere. */
export function indicator(condition: Tensor): Tensor {
  return condition.astype(np.float32);
}

/**
 * PPO's clipped surrogate with DAPO's asymmetric range:
 *
 *   ℓ_t = −min(r_t·A_t, clip(r_t, 1 − ε_low, 1 + ε_high)·A_t)
 *
 * The min takes the clipped term, whose gradient is 0, exactly when the update would push r
 * further out of the range in the direction A favours: r > 1 + ε_high with A > 0 (clippedHigh),
 * or r < 1 − ε_low with A < 0 (clippedLow). Those are the flags returned (TRL's definition).
 */
export function ppoClipTerm(logRatio: Tensor, advantages: Tensor, range: ClipRange): PolicyTerm {
  const ratio = np.exp(logRatio);
  const clipped = np.clip(ratio.ref, 1 - range.clipLow, 1 + range.clipHigh);
  const loss = np.minimum(ratio.ref.mul(advantages.ref), clipped.mul(advantages.ref)).neg();
  const r = lax.stopGradient(ratio.ref);
  const a = lax.stopGradient(advantages);
  const clippedLow = indicator(r.ref.less(1 - range.clipLow)).mul(indicator(a.ref.less(0)));
  const clippedHigh = indicator(r.greater(1 + range.clipHigh)).mul(indicator(a.greater(0)));
  return { loss, ratio, clippedLow, clippedHigh };
}

/**
 * CISPO (MiniMax-M1, arXiv:2506.13585, eq. 4–5): clip the importance-sampling weight instead of
 * the update, stop its gradient, and weight the REINFORCE term with it,
 *
 *   ℓ_t = −sg(clip(r_t, 1 − ε_low, 1 + ε_high)) · A_t · log π_new(t)
 *
 * so every token keeps a gradient (PPO drops the clipped ones); d ℓ_t / dθ = −ŵ_t·A_t·∇log π.
 * The paper sets no lower bound (a large ε_low) and tunes ε_high only; the same form is Tinker's
 * `cispo` loss and torchrl's CISPOLoss. The flags mark tokens whose weight was clipped, whatever A.
 */
export function cispoTerm(newLogprobs: Tensor, logRatio: Tensor, advantages: Tensor, range: ClipRange): PolicyTerm {
  const ratio = np.exp(logRatio);
  const r = lax.stopGradient(ratio.ref);
  const weight = np.clip(r.ref, 1 - range.clipLow, 1 + range.clipHigh);
  const loss = weight.mul(lax.stopGradient(advantages)).mul(newLogprobs).neg();
  const clippedLow = indicator(r.ref.less(1 - range.clipLow));
  const clippedHigh = indicator(r.greater(1 + range.clipHigh));
  return { loss, ratio, clippedLow, clippedHigh };
}

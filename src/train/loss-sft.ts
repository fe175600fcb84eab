/**
 * The supervised loss of the warm start (training on an env's demonstrations before RL): the
 * masked mean negative log-likelihood of the demonstrated tokens,
 *
 *   loss = −Σ_t m_t · log π(t) / Σ_t m_t
 *
 * on per-token tensors [B, T] (tokenLogprobs). Consumes its arguments; returns the loss and the
 * metric `tokens` (Σ m), the form ParamTrainer's LossFn accepts.
 */
import type { LossWithMetrics } from './loss-types.ts';
import { lax, type Tensor } from '../model/engine.ts';
import { maskedMean } from './loss-normalize.ts';

export function supervisedLoss(logprobs: Tensor, mask: Tensor): LossWithMetrics {
  const tokens = lax.stopGradient(mask.ref.sum());
  return [maskedMean(logprobs, mask).neg(), { tokens }];
}

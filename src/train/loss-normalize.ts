/**
 * Length normalisation (DESIGN rule 6): how per-token losses ℓ [B, T] become one scalar. Each mode
 * is a weighting w [B, T] of the tokens, loss = Σ_t w_t·ℓ_t, with m the loss mask and n the number
 * of sequences (those with at least one masked token):
 *
 *   dapo     w = m / Σ m                      token mean over the batch (DAPO)
 *   grpo     w = m / (L_seq · n)              per-sequence token mean, then mean over sequences (GRPO)
 *   dr_grpo  w = m / (maxCompletionTokens · n) token sum over a constant (Dr. GRPO: no length bias)
 *
 * L_seq is the number of masked tokens of the token's sequence: the row's count by default (one
 * sequence per row), or `sequenceLengths` [B, T] when rows are packed with several sequences.
 *
 * With token weights c [B, T] (a sequence standing for c identical ones, samples-merge.ts) every
 * mode equals the batch with each sequence repeated c times: m becomes m·c in the sums and the
 * numerators, n = Σ m·c / L_seq, and L_seq stays the unweighted count (a repeated sequence is as
 * long as the original). maskedMean's weighted form does the same for token means.
 * Consumes its Tensor arguments.
 */
import { np, type Tensor } from '../model/engine.ts';
import type { LengthNorm } from './loss-config.ts';

/** A floor for denominators that are 0 only when there is nothing to average (then the sum is 0 too). */
const EMPTY_GUARD = 1e-6;

/** Σ m·x / Σ m over the masked tokens (0 when none); m may be a weighted mask (mask × token weights). */
export function maskedMean(x: Tensor, mask: Tensor): Tensor {
  const count = np.maximum(mask.ref.sum(), 1);
  return x.mul(mask).sum().div(count);
}

export interface LengthNormOptions {
  lengthNorm: LengthNorm;
  /** dr_grpo's constant. */
  maxCompletionTokens?: number;
}

/**
 * The token weights w [B, T] of a mode (they carry no gradient: the mask is data). `tokenWeights`
 * [B, T]: how many identical sequences each token's sequence stands for (absent: 1).
 */
export function lengthNormWeights(mask: Tensor, options: LengthNormOptions, sequenceLengths?: Tensor, tokenWeights?: Tensor): Tensor {
  if (options.lengthNorm === 'dapo') {
    sequenceLengths?.dispose();
    const weighted = tokenWeights ? mask.mul(tokenWeights) : mask;
    const count = np.maximum(weighted.ref.sum(), 1);
    return weighted.div(count);
  }
  const constant = options.maxCompletionTokens;
  if (options.lengthNorm === 'dr_grpo' && (constant === undefined || !(constant > 0))) {
    mask.dispose();
    sequenceLengths?.dispose();
    tokenWeights?.dispose();
    throw new Error('lengthNorm dr_grpo needs maxCompletionTokens > 0');
  }
  // u_t = c_t·m_t / L_seq sums to c over each sequence, so Σ u = n, the number of sequences (each counted c times).
  const lengths = sequenceLengths ?? mask.ref.sum(-1, { keepdims: true });
  const weighted = tokenWeights ? mask.mul(tokenWeights) : mask;
  const perSequence = weighted.ref.div(np.maximum(lengths, 1));
  const sequences = np.maximum(perSequence.ref.sum(), EMPTY_GUARD);
  if (options.lengthNorm === 'grpo') {
    weighted.dispose();
    return perSequence.div(sequences);
  }
  // Σ_t c_t m_t ℓ_t / (C · n): each sequence's token sum over the constant, then the mean over sequences.
  perSequence.dispose();
  return weighted.div(sequences.mul(constant!));
}

/** Σ w·ℓ: the normalised scalar loss. */
export function weightedSum(perToken: Tensor, weights: Tensor): Tensor {
  return perToken.mul(weights).sum();
}

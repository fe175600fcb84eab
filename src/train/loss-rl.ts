/**
 * The RL loss of a trainer step (DESIGN rule 6) on per-token tensors [B, T], independent of the
 * model: the policy term (clipped PPO or CISPO), optionally corrected by a truncated importance
 * weight, plus β times the k3 KL to a frozen reference, length-normalised; and the metrics to log.
 *
 *   x_t  = log π_new − log π_old            (π_old = oldLogprobs, or the sampler when absent)
 *   ℓ_t  = w_t · policyTerm(x_t, A_t) + β · k3(log π_ref − log π_new)
 *   w_t  = min(π_old / π_sampler, isCap)    (1 when oldLogprobs is absent: the sampler is π_old)
 *   loss = Σ_t weight_t(lengthNorm) · ℓ_t − c · Σ_t weight_t(lengthNorm) · H_t   (c = entropyCoef)
 *
 * The importance weight multiplies the policy term only, as in verl: the KL penalty is a
 * regulariser of π_new, not an estimate under the sampler. Metrics are token means over the mask.
 * With `tokenWeights` c (a sequence standing for c identical ones, samples-merge.ts), the length
 * weights and the metrics' means count each token c times (loss-normalize.ts): the loss, its
 * gradient and the metrics equal those of the batch with each sequence repeated c times. The mask
 * itself stays 0/1: it multiplies log-ratios, which c must not scale.
 * Tokens marked `explored` (answers the trainer wrote, never sampled: train/explored-answers.ts)
 * have no sampling logprob: their ratio is anchored on π_new itself (stop-gradient, so the ratio is
 * 1 and the term's gradient is A_t ∇log π_new), and they are left out of the KL and its metric, whose
 * k3 estimate holds only under π_new's own samples.
 * Consumes every Tensor in `inputs` (jax-js convention); returns what ParamTrainer's LossFn accepts.
 */
import type { LossWithMetrics } from './loss-types.ts';
import { lax, np, type Tensor } from '../model/engine.ts';
import type { LossSettings } from './loss-config.ts';
import { truncatedImportanceWeight } from './loss-importance.ts';
import { k3, klToReference } from './loss-kl.ts';
import { lengthNormWeights, maskedMean, weightedSum } from './loss-normalize.ts';
import { cispoTerm, ppoClipTerm } from './loss-policy.ts';

export interface PolicyLossInputs {
  /** log π_new per token [B, T], differentiable (tokenLogprobs). */
  newLogprobs: Tensor;
  /** log π_sampler per token [B, T], recorded when the tokens were sampled. */
  samplingLogprobs: Tensor;
  /** Per-token advantage [B, T]. */
  advantages: Tensor;
  /** 1 on trained tokens, 0 on prompt and padding [B, T]. */
  mask: Tensor;
  /** log π_old [B, T] when the ratio's anchor is not the sampler (then w_t corrects for the sampler). */
  oldLogprobs?: Tensor;
  /** log π_ref [B, T] of the frozen reference; needed when klBeta > 0. */
  refLogprobs?: Tensor;
  /** Per-token entropy of π_new [B, T] (tokenLogprobs' entropy): reported, and differentiable for the bonus (entropyCoef > 0). */
  entropy?: Tensor;
  /** Masked tokens of each token's sequence [B, T], for grpo/dr_grpo on packed rows (default: per row). */
  sequenceLengths?: Tensor;
  /** β as a scalar for this step (a schedule), replacing settings.klBeta; an input, so jit does not recompile. */
  klBeta?: Tensor;
  /** How many identical sequences each token's sequence stands for [B, T] (default: 1 everywhere). */
  tokenWeights?: Tensor;
  /** 1 on tokens the policy did not sample (explored answers) [B, T]; default: none. */
  explored?: Tensor;
}

/** What the settings need that the inputs lack, or null. */
function missingInput(inputs: PolicyLossInputs, settings: LossSettings): string | null {
  if (settings.klBeta > 0 && !inputs.refLogprobs) return 'klBeta > 0 needs refLogprobs (the frozen reference policy)';
  if (settings.entropyCoef > 0 && !inputs.entropy) return 'entropyCoef > 0 needs the per-token entropy';
  return null;
}

/**
 * Metric names: policyLoss and klLoss (the two parts of the loss, normalised), clipFracLow and
 * clipFracHigh (share of tokens where each clip bound took effect), ratioMean (mean π_new/π_old),
 * approxKl (k3 mean of KL(π_old ‖ π_new)), isCappedShare and isWeightMean (the importance weight;
 * 0 and 1 without oldLogprobs), refKl (k3 mean to the reference; only with refLogprobs), entropy
 * (only with entropy), entropyBonus (c · the length-normalised entropy, subtracted from the loss;
 * only with entropyCoef > 0).
 */
export function policyLoss(inputs: PolicyLossInputs, settings: LossSettings): LossWithMetrics {
  const { newLogprobs, advantages, mask, refLogprobs, entropy, explored } = inputs;
  let { samplingLogprobs, oldLogprobs } = inputs;
  const missing = missingInput(inputs, settings);
  if (missing) {
    for (const t of Object.values(inputs) as (Tensor | undefined)[]) t?.dispose();
    throw new Error(`loss: ${missing}`);
  }
  // Explored tokens: every anchor is π_new itself (stop-gradient), so their ratio and importance weight are 1.
  const sampled = explored ? explored.ref.neg().add(1) : null;
  if (explored) {
    const selfAnchored = (x: Tensor) => x.mul(sampled!.ref).add(lax.stopGradient(newLogprobs.ref).mul(explored.ref));
    samplingLogprobs = selfAnchored(samplingLogprobs);
    if (oldLogprobs) oldLogprobs = selfAnchored(oldLogprobs);
    explored.dispose();
  }
  const weights = lengthNormWeights(mask.ref, settings, inputs.sequenceLengths, inputs.tokenWeights?.ref);
  const metrics: Record<string, Tensor> = {};
  // Token means count a token as often as its sequence's weight.
  const meanMask = inputs.tokenWeights ? mask.ref.mul(inputs.tokenWeights) : mask.ref;
  const mean = (x: Tensor): Tensor => lax.stopGradient(maskedMean(x, meanMask.ref));

  // The PPO ratio's anchor, and the sampler correction when the anchor is not the sampler.
  let isWeight: Tensor | null = null;
  let anchor: Tensor;
  if (oldLogprobs) {
    const is = truncatedImportanceWeight(oldLogprobs.ref.sub(samplingLogprobs).mul(mask.ref), settings.isCap);
    metrics.isCappedShare = mean(is.capped);
    metrics.isWeightMean = mean(is.weight.ref);
    isWeight = is.weight;
    anchor = oldLogprobs;
  } else {
    metrics.isCappedShare = np.array(0);
    metrics.isWeightMean = np.array(1);
    anchor = samplingLogprobs;
  }
  const logRatio = newLogprobs.ref.sub(anchor).mul(mask.ref);
  metrics.approxKl = mean(k3(lax.stopGradient(logRatio.ref)));

  const range = { clipLow: settings.clipLow, clipHigh: settings.clipHigh };
  const term =
    settings.policyLoss === 'cispo'
      ? cispoTerm(newLogprobs.ref, logRatio, advantages, range)
      : ppoClipTerm(logRatio, advantages, range);
  metrics.ratioMean = mean(term.ratio);
  metrics.clipFracLow = mean(term.clippedLow);
  metrics.clipFracHigh = mean(term.clippedHigh);
  const perToken = isWeight ? term.loss.mul(isWeight) : term.loss;
  let loss = weightedSum(perToken, weights.ref);
  metrics.policyLoss = lax.stopGradient(loss.ref);

  if (refLogprobs) {
    // Only sampled tokens: the KL's estimate holds under π_new's samples.
    const klMask = sampled ? mask.ref.mul(sampled.ref) : mask.ref;
    const klMean = (x: Tensor): Tensor => lax.stopGradient(maskedMean(x, sampled ? meanMask.ref.mul(sampled.ref) : meanMask.ref));
    // The metric is k3's value (an unbiased KL estimate) whichever estimator the loss uses.
    const kl = klToReference(refLogprobs.ref, newLogprobs.ref, klMask.ref, settings.klMax, settings.klEstimator);
    metrics.refKl = klMean(settings.klEstimator === 'k3' ? lax.stopGradient(kl.ref) : k3(lax.stopGradient(refLogprobs.ref.sub(newLogprobs.ref)).mul(klMask.ref)));
    klMask.dispose();
    refLogprobs.dispose();
    if (inputs.klBeta || settings.klBeta > 0) {
      const klLoss = weightedSum(kl, weights.ref).mul(inputs.klBeta ?? settings.klBeta);
      metrics.klLoss = lax.stopGradient(klLoss.ref);
      loss = loss.add(klLoss);
    } else {
      kl.dispose();
      metrics.klLoss = np.array(0);
    }
  } else {
    metrics.klLoss = np.array(0);
  }
  if (entropy && settings.entropyCoef > 0) {
    const bonus = weightedSum(entropy.ref, weights.ref).mul(settings.entropyCoef);
    metrics.entropyBonus = lax.stopGradient(bonus.ref);
    loss = loss.sub(bonus);
  }
  if (entropy) metrics.entropy = mean(lax.stopGradient(entropy));
  if (inputs.klBeta && !refLogprobs) inputs.klBeta.dispose();

  sampled?.dispose();
  newLogprobs.dispose();
  weights.dispose();
  meanMask.dispose();
  mask.dispose();
  return [loss, metrics];
}

/**
 * Options of the RL loss (DESIGN rule 6), plain JSON from the run's config. A bad field is a
 * UsageError naming `loss.<field>`.
 */
import { z } from 'zod';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import { KL_ESTIMATORS } from './loss-kl.ts';

/**
 * `grpo`     per-sequence token mean, then the mean over sequences (DeepSeekMath GRPO)
 * `dr_grpo`  token sum over the constant maxCompletionTokens × sequences (Dr. GRPO: no length bias)
 * `dapo`     token mean over every token of the batch (DAPO; TRL's default `loss_type`)
 */
export const LENGTH_NORMS = ['grpo', 'dr_grpo', 'dapo'] as const;
export type LengthNorm = (typeof LENGTH_NORMS)[number];

export const lossConfigSchema = z.strictObject({
  /** `ppo_clip`: −min(r·A, clip(r)·A); `cispo`: −sg(clip(r))·A·log π (loss-policy.ts). */
  policyLoss: z.enum(['ppo_clip', 'cispo']).default('ppo_clip'),
  /** r is clipped below at 1 − clipLow (CISPO's paper sets no lower bound: use clipLow ≥ 1 for that). */
  clipLow: z.number().min(0, 'must be ≥ 0').default(0.2),
  /** r is clipped above at 1 + clipHigh (DAPO's clip-higher: 0.28 > 0.2 keeps exploration alive). */
  clipHigh: z.number().min(0, 'must be ≥ 0').default(0.28),
  /** β, the weight of the KL term to a frozen reference; 0 disables it (and no reference is needed). */
  klBeta: z.number().min(0, 'must be ≥ 0').default(0),
  /**
   * The KL term's per-token estimator (loss-kl.ts): `k3` (the default; its gradient is the forward
   * KL's, which holds even a sure choice soft) or `k2` = ½(log π − log π_ref)² (the reverse KL's
   * gradient: sure where the advantage is large, soft where it is small).
   */
  klEstimator: z.enum(KL_ESTIMATORS).default('k3'),
  /** Past this value each token's KL term continues along its tangent, bounding its gradient (loss-kl.ts); null: unbounded. */
  klMax: z.number().positive('must be > 0').nullable().default(null),
  lengthNorm: z.enum(LENGTH_NORMS).default('dapo'),
  /** Dr. GRPO's constant: tokens per sequence to divide by (the sampler's max completion tokens). */
  maxCompletionTokens: z.number().int('must be an integer').positive('must be > 0').optional(),
  /**
   * Truncated importance sampling when the sampler differs from the policy the ratio is taken
   * against (a server, an older version): each token's policy loss is multiplied by
   * min(π_old / π_sampler, isCap).
   */
  isCap: z.number().min(1, 'must be ≥ 1 (a cap below 1 would down-weight on-policy tokens)').default(2),
  /**
   * Weight c of an entropy bonus: the loss subtracts c times the trained tokens' mean entropy
   * (length-normalised as the policy term), which keeps a policy from collapsing onto one answer
   * before it has learned which state wants which; 0 disables it.
   */
  entropyCoef: z.number().min(0, 'must be ≥ 0').default(0),
});

export type LossConfig = z.input<typeof lossConfigSchema>;
export type LossSettings = z.output<typeof lossConfigSchema>;

export function parseLossConfig(config: unknown, label = 'loss'): LossSettings {
  const parsed = lossConfigSchema.safeParse(config ?? {});
  if (!parsed.success) throw new UsageError(`loss options: ${describeZodError(parsed.error, label)}`);
  const c = parsed.data;
  if (c.lengthNorm === 'dr_grpo' && c.maxCompletionTokens === undefined) {
    throw new UsageError(`loss options: ${label}.maxCompletionTokens: required when ${label}.lengthNorm is "dr_grpo"`);
  }
  if (c.policyLoss === 'ppo_clip' && c.clipLow >= 1) {
    throw new UsageError(`loss options: ${label}.clipLow: must be < 1 with ppo_clip (1 − clipLow is the lower ratio bound)`);
  }
  return c;
}

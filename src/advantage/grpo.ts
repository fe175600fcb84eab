/**
 * GRPO (DESIGN rule 3): G rollouts of the same task form a group, and each is judged against
 * its group,
 *
 *   A_i = (r_i − mean_group(r)) / (σ + ε)
 *
 * `scale: 'group'`  σ = std of the group's rewards (DeepSeekMath GRPO)
 * `scale: 'batch'`  σ = std of every reward in the batch; the mean stays per group
 *                   (TRL's scale_rewards="batch")
 * `scale: 'none'`   no division: A_i = r_i − mean_group(r) (Dr. GRPO)
 *
 * σ is the sample std (n − 1) by default, as in TRL's GRPOTrainer and verl's
 * compute_grpo_outcome_advantage (both call torch.std, unbiased by default); `std: 'population'`
 * divides by n, as the Alea seed does. ε defaults to TRL's 1e-4 (verl uses 1e-6).
 * A group that is tied (all rewards equal, or a single sample) gets 0 exactly: it carries no
 * signal, and 0/0 or float noise over a near-zero σ must never reach the loss.
 * The episode's advantage applies to every turn of it (outcome.ts, `broadcastOverTurns`).
 */
import { z } from 'zod';
import { isTied, mean, std } from './moments.ts';
import { broadcastOverTurns } from './outcome.ts';
import type { ScoredGroup, TrajectoryAdvantages } from './types.ts';
import { checkScoredGroups, epsilonOption, parseOptions, stdOption } from './validate.ts';

export const grpoOptionsSchema = z.strictObject({
  scale: z.enum(['group', 'batch', 'none']).default('group'),
  epsilon: epsilonOption,
  std: stdOption,
});
export type GrpoOptions = z.input<typeof grpoOptionsSchema>;
export type GrpoSettings = z.output<typeof grpoOptionsSchema>;

/** The group-relative formula over plain reward lists, one list per group; shared with dense.ts. */
export function groupRelative(groups: readonly (readonly number[])[], o: GrpoSettings): number[][] {
  const batchSigma = o.scale === 'batch' ? std(groups.flat(), o.std) : 0;
  return groups.map((r) => {
    if (isTied(r)) return r.map(() => 0);
    const mu = mean(r);
    if (o.scale === 'none') return r.map((ri) => ri - mu); // A_i = r_i − μ
    const sigma = o.scale === 'group' ? std(r, o.std) : batchSigma;
    return r.map((ri) => (ri - mu) / (sigma + o.epsilon)); // A_i = (r_i − μ) / (σ + ε)
  });
}

export function grpoAdvantages(groups: readonly ScoredGroup[], options: GrpoOptions = {}): TrajectoryAdvantages[] {
  checkScoredGroups(groups);
  const o = parseOptions(grpoOptionsSchema, options, 'grpo');
  const perSample = groupRelative(
    groups.map((g) => g.samples.map((s) => s.reward)),
    o,
  );
  return broadcastOverTurns(groups, perSample);
}

/**
 * Outcome advantage (DESIGN rule 5, outcome envs): when no single decision can be scored on its
 * own, every decision of an episode is credited with the episode's normalised return,
 *
 *   Â = (R − mean_batch(R)) / (std_batch(R) + ε),   A_t = Â for every turn t of the episode.
 *
 * The comparison set is the whole batch (each episode may come from a different seed), so group
 * ids only label the output. A batch whose returns are all equal gets 0 everywhere.
 */
import { z } from 'zod';
import { isTied, mean, std } from './moments.ts';
import type { ScoredGroup, TrajectoryAdvantages } from './types.ts';
import { turnRewardsOf } from './types.ts';
import { checkScoredGroups, epsilonOption, parseOptions, stdOption } from './validate.ts';

export const outcomeOptionsSchema = z.strictObject({ epsilon: epsilonOption, std: stdOption });
export type OutcomeOptions = z.input<typeof outcomeOptionsSchema>;

export function outcomeAdvantages(
  groups: readonly ScoredGroup[],
  options: OutcomeOptions = {},
): TrajectoryAdvantages[] {
  checkScoredGroups(groups);
  const o = parseOptions(outcomeOptionsSchema, options, 'outcome');
  const returns = groups.flatMap((g) => g.samples.map((s) => s.reward));
  const mu = mean(returns);
  const sigma = std(returns, o.std);
  const tied = isTied(returns);
  const episodeAdvantage = (r: number): number => (tied ? 0 : (r - mu) / (sigma + o.epsilon));
  return broadcastOverTurns(
    groups,
    groups.map((g) => g.samples.map((s) => episodeAdvantage(s.reward))),
  );
}

/** Gives every turn of sample i in group g the advantage `perSample[g][i]`. */
export function broadcastOverTurns(
  groups: readonly ScoredGroup[],
  perSample: readonly (readonly number[])[],
): TrajectoryAdvantages[] {
  return groups.flatMap((group, g) =>
    group.samples.map((sample, i) => ({
      trajectoryId: sample.trajectoryId,
      groupId: group.groupId,
      turnAdvantages: turnRewardsOf(sample).map(() => perSample[g][i]),
    })),
  );
}

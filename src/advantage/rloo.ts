/**
 * RLOO (REINFORCE leave-one-out): each sample's baseline is the mean of the others in its group,
 *
 *   A_i = r_i − (1 / (G − 1)) Σ_{j≠i} r_j  =  r_i − (S − r_i) / (G − 1),   S = Σ_j r_j
 *
 * (equivalently G / (G − 1) · (r_i − mean)). The baseline never contains r_i, so it is unbiased.
 * A group of one has no other sample to compare with and a tied group has nothing to rank: both
 * get 0 (normalize.ts counts them). The episode's advantage applies to every turn of it.
 */
import { isTied } from './moments.ts';
import { broadcastOverTurns } from './outcome.ts';
import type { ScoredGroup, TrajectoryAdvantages } from './types.ts';
import { checkScoredGroups } from './validate.ts';

/** Leave-one-out advantages of one group's rewards. */
export function leaveOneOut(r: readonly number[]): number[] {
  if (isTied(r)) return r.map(() => 0);
  const G = r.length;
  const S = r.reduce((a, b) => a + b, 0);
  return r.map((ri) => ri - (S - ri) / (G - 1));
}

export function rlooAdvantages(groups: readonly ScoredGroup[]): TrajectoryAdvantages[] {
  checkScoredGroups(groups);
  return broadcastOverTurns(
    groups,
    groups.map((g) => leaveOneOut(g.samples.map((s) => s.reward))),
  );
}

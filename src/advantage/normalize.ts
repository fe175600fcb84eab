/**
 * After the estimator: zero-variance groups (counted, optionally dropped), batch whitening,
 * clipping, and the stats reported as metrics.
 *
 * A group whose rewards are all equal (or that has one sample) cannot rank its samples: its
 * group-relative advantages are 0 and it only dilutes the batch. It is always counted; dropping
 * it (DAPO's dynamic sampling filter) is an option, applied to the input groups before the
 * estimator so that batch statistics (scale 'batch', whitening) see only the groups kept.
 */
import { isTied, mean, std } from './moments.ts';
import type { TrajectoryAdvantages } from './types.ts';

interface RewardGroup {
  groupId: string;
  samples: readonly { reward: number }[];
}

export function isZeroVarianceGroup(group: RewardGroup): boolean {
  return isTied(group.samples.map((s) => s.reward));
}

/** Splits off the zero-variance groups; `dropped` lists their ids in input order. */
export function dropZeroVarianceGroups<G extends RewardGroup>(groups: readonly G[]): { kept: G[]; dropped: string[] } {
  const kept: G[] = [];
  const dropped: string[] = [];
  for (const group of groups) {
    if (isZeroVarianceGroup(group)) dropped.push(group.groupId);
    else kept.push(group);
  }
  return { kept, dropped };
}

/**
 * Whitening across the batch: every turn's advantage counts once,
 *   A' = (A − mean(A)) / (std(A) + ε)      (population std)
 * A batch of equal advantages becomes all 0.
 */
export function whiten(advantages: readonly TrajectoryAdvantages[], epsilon = 1e-8): TrajectoryAdvantages[] {
  const all = advantages.flatMap((a) => a.turnAdvantages);
  if (isTied(all)) return mapTurns(advantages, () => 0);
  const mu = mean(all);
  const sigma = std(all, 'population');
  return mapTurns(advantages, (a) => (a - mu) / (sigma + epsilon));
}

/** A' = clamp(A, −limit, +limit). */
export function clip(advantages: readonly TrajectoryAdvantages[], limit: number): TrajectoryAdvantages[] {
  if (!(limit > 0)) throw new RangeError(`clip limit must be > 0, got ${limit}`);
  return mapTurns(advantages, (a) => Math.min(limit, Math.max(-limit, a)));
}

function mapTurns(advantages: readonly TrajectoryAdvantages[], f: (a: number) => number): TrajectoryAdvantages[] {
  return advantages.map((t) => ({ ...t, turnAdvantages: t.turnAdvantages.map(f) }));
}

export interface AdvantageStats {
  /** Over every advantage value given (per turn, or per decision sample); population std; all 0 when there are none. */
  mean: number;
  std: number;
  min: number;
  max: number;
  count: number;
  /** Groups in the input, dropped ones included. */
  groups: number;
  /** Groups that could not rank their samples: all rewards equal, or a single sample. */
  zeroVarianceGroups: number;
  /** The subset of zeroVarianceGroups with a single sample. */
  singletonGroups: number;
  droppedGroups: number;
}

export function advantageStats(
  values: readonly number[],
  groups: readonly RewardGroup[],
  dropped: readonly string[] = [],
): AdvantageStats {
  let min = values.length ? Infinity : 0;
  let max = values.length ? -Infinity : 0;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return {
    mean: mean(values),
    std: std(values, 'population'),
    min,
    max,
    count: values.length,
    groups: groups.length,
    zeroVarianceGroups: groups.filter(isZeroVarianceGroup).length,
    singletonGroups: groups.filter((g) => g.samples.length === 1).length,
    droppedGroups: dropped.length,
  };
}

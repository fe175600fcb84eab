/**
 * Group-level reward parts: a score that only exists for a whole group (an LLM judge ranking the G
 * samples of one task against each other). After the group's episodes end, each part adds its named
 * score to every trajectory's reward parts and its weighted value to the reward (on the last turn too,
 * so the turns still sum to the reward). A group a part cannot score is marked on its trajectories
 * with metric `${name}_unscored` = 1 and left out of training (`isGroupUnscored`); no score is
 * invented for it.
 */
import type { Trajectory } from '../core/trajectory.ts';

export type GroupScore = { status: 'scored'; scores: number[] } | { status: 'unscored'; reason: string };

export interface GroupRewardPart {
  /** The reward part's name (e.g. `judge`); must not collide with a part the trajectories already have. */
  name: string;
  /** Its weight in the total reward (default 1). */
  weight?: number;
  /** One score per trajectory, in the order given, or why the group could not be scored. */
  scoreGroup(trajectories: readonly Trajectory[]): Promise<GroupScore>;
}

const UNSCORED_SUFFIX = '_unscored';

export function unscoredMetric(name: string): string {
  return `${name}${UNSCORED_SUFFIX}`;
}

/** True when some group part could not score this trajectory's group: its reward is incomplete. */
export function isGroupUnscored(t: Trajectory): boolean {
  return Object.entries(t.metrics).some(([key, value]) => key.endsWith(UNSCORED_SUFFIX) && value > 0);
}

/** The unscored marks among a trajectory's metrics (to keep when its metrics are recomputed). */
export function unscoredMarks(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).filter(([key]) => key.endsWith(UNSCORED_SUFFIX)));
}

/** Adds one part's score to each trajectory (or marks them unscored); throws if the part already exists. */
export function applyGroupScore(trajectories: readonly Trajectory[], score: GroupScore, name: string, weight = 1): void {
  if (!Number.isFinite(weight)) throw new Error(`group reward part '${name}': weight must be a finite number, got ${weight}`);
  if (score.status === 'scored' && score.scores.length !== trajectories.length) {
    throw new Error(`group reward part '${name}': ${score.scores.length} scores for ${trajectories.length} trajectories`);
  }
  for (const t of trajectories) if (name in t.rewardParts) throw new Error(`reward part '${name}' already exists on trajectory ${t.id}`);
  for (const [i, t] of trajectories.entries()) {
    if (score.status === 'unscored') {
      t.metrics[unscoredMetric(name)] = 1;
      continue;
    }
    const value = score.scores[i];
    if (!Number.isFinite(value)) throw new Error(`group reward part '${name}': score ${i} is not a finite number (${value})`);
    delete t.metrics[unscoredMetric(name)];
    t.rewardParts[name] = value;
    t.reward += weight * value;
    const last = t.turns.at(-1);
    if (last) {
      last.rewardParts = { ...last.rewardParts, [name]: value };
      last.reward += weight * value;
    }
  }
}

/**
 * Scores a finished group with every part, in order. Failed episodes (an env error) are not scored
 * and are marked unscored; a part that throws leaves the group unscored by it.
 */
export async function applyGroupRewardParts(parts: readonly GroupRewardPart[], group: readonly Trajectory[]): Promise<void> {
  const scorable = group.filter((t) => t.status !== 'failed');
  const failed = group.filter((t) => t.status === 'failed');
  for (const part of parts) {
    applyGroupScore(failed, { status: 'unscored', reason: 'the episode failed' }, part.name, part.weight);
    if (scorable.length === 0) continue;
    let score: GroupScore;
    try {
      score = await part.scoreGroup(scorable);
    } catch (error) {
      score = { status: 'unscored', reason: (error as Error).message };
    }
    applyGroupScore(scorable, score, part.name, part.weight);
  }
}

/**
 * The plain data advantage estimators read and write. Built from recorded trajectories by
 * `scoredGroupsFromTrajectories` (from-trajectories.ts), or by hand in tests.
 */

/** One trajectory as the estimators see it: an id, its total reward, and the reward of each turn. */
export interface ScoredSample {
  trajectoryId: string;
  /** The episode's total reward: what GRPO, RLOO and outcome advantages compare. */
  reward: number;
  /**
   * Reward of each turn, in order; its length is the episode's number of turns. GAE credits
   * these; the outcome estimators only use the length. Absent: a one-turn episode whose
   * single turn earned `reward`.
   */
  turnRewards?: number[];
  /**
   * What the sample saw and did at each turn (one entry per turn): the tree estimator groups the
   * samples of a group by these. `state` and `action` are compared as strings only.
   */
  decisions?: Decision[];
}

/** One turn as the tree and critic estimators see it: the observation and the action taken on it. */
export interface Decision {
  state: string;
  action: string;
  /** The env's state at the turn (env.state()) as canonical JSON: what the critic keys on by default. */
  envState?: string;
}

/** Decision.action of an answer the env refused (from-trajectories.ts). */
export const INVALID_ACTION_KEY = JSON.stringify(['invalid']);

/** The samples of one task (same env and seed), G rollouts from the same start. */
export interface ScoredGroup {
  groupId: string;
  samples: ScoredSample[];
}

/** The estimators' output for one trajectory: every token of turn k's completion gets `turnAdvantages[k]`. */
export interface TrajectoryAdvantages {
  trajectoryId: string;
  groupId: string;
  turnAdvantages: number[];
}

/** The turn rewards of a sample, with the one-turn default applied. */
export function turnRewardsOf(sample: ScoredSample): number[] {
  return sample.turnRewards ?? [sample.reward];
}

/** Return-to-go of every turn: G_k = Σ_{t ≥ k} r_t. */
export function returnsToGo(sample: ScoredSample): number[] {
  const rewards = turnRewardsOf(sample);
  const out = new Array<number>(rewards.length);
  let acc = 0;
  for (let k = rewards.length - 1; k >= 0; k--) out[k] = acc += rewards[k];
  return out;
}

/** A turn's named reward parts (rule 7): the env's own, the invalid-action penalty, the reward functions'. */
import type { RewardParts, Turn } from '../core/trajectory.ts';
import { combineRewardParts, turnRewardParts } from '../rewards/composite.ts';
import type { RewardConfig } from '../rewards/reward.ts';

/** The part name of an env reward that came without parts. */
export const ENV_PART = 'env';
/** The part name of the penalty for an answer that ended the episode as an invalid action. */
export const INVALID_ACTION_PART = 'invalid_action';

/** Adds the reward functions' parts to `turn.rewardParts` (holding the env's) and sets the weighted total. */
export function scoreTurn(turn: Turn, rewards: RewardConfig | undefined): void {
  try {
    if (rewards && rewards.fns.length > 0) turn.rewardParts = turnRewardParts(turn, rewards.fns);
    turn.reward = combineRewardParts(turn.rewardParts, rewards?.weights);
  } catch (error) {
    throw new Error(`scoring turn ${turn.index} failed: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
}

/** The env's parts of a step; checks they add up to its reward, as the Env contract says. */
export function envRewardParts(reward: number, given: RewardParts | undefined): RewardParts | string {
  if (!given) return { [ENV_PART]: reward };
  let sum = 0;
  for (const key in given) sum += given[key];
  if (Math.abs(sum - reward) > 1e-9 * Math.max(1, Math.abs(reward))) {
    return `rewardParts add up to ${sum}, not to the reward ${reward}`;
  }
  return { ...given };
}

/** Reward functions over recorded turn text (format, reasoning), applied by the agent loop beside the env's parts. */
import type { Turn } from '../core/trajectory.ts';
import type { GroupRewardPart } from './group-reward.ts';

export interface TurnReward {
  /** The reward part's name (e.g. `format`, `reasoning`); must not collide with the env's own parts. */
  name: string;
  /** Scores one recorded turn (its LLM calls' text, parsed actions, parse error). */
  score(turn: Turn): number;
}

/** Reward functions an env asks for, and the composite's weights over every named part (env parts included). */
export interface RewardConfig {
  fns: TurnReward[];
  /** Weight per part name; a part without a weight counts with weight 1. */
  weights: Record<string, number>;
  /** Parts scored per group once all its episodes have ended (an LLM judge); see group-reward.ts. */
  groupParts?: GroupRewardPart[];
}

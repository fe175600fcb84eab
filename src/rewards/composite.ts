/** The composite reward: a weighted sum of named parts, every part kept (DESIGN rule 7). */
import type { RewardParts, Turn } from '../core/trajectory.ts';
import type { TurnReward } from './reward.ts';

/** total = Σ_name weight[name]·part[name]; a part without a weight counts with weight 1. */
export function combineRewardParts(parts: RewardParts, weights: Record<string, number> = {}): number {
  let total = 0;
  for (const [name, value] of Object.entries(parts)) {
    const w = weights[name] ?? 1;
    if (!Number.isFinite(value)) throw new Error(`reward part '${name}' is not a finite number (${value})`);
    if (!Number.isFinite(w)) throw new Error(`weight of reward part '${name}' is not a finite number (${w})`);
    total += w * value;
  }
  return total;
}

/** The env's parts of a turn plus each reward function's score; a function may not reuse an env part's name. */
export function turnRewardParts(turn: Turn, fns: readonly TurnReward[], envParts: RewardParts = turn.rewardParts): RewardParts {
  const parts: RewardParts = { ...envParts };
  for (const fn of fns) {
    if (fn.name in parts) throw new Error(`reward function '${fn.name}' collides with a reward part of the same name`);
    parts[fn.name] = fn.score(turn);
  }
  return parts;
}

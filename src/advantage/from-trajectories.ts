/** From recorded trajectories (src/core/trajectory.ts) to the estimators' plain input. */
import { canonical, canonicalJson } from '../core/canonical.ts';
import type { Trajectory, Turn } from '../core/trajectory.ts';
import { isGroupUnscored } from '../rewards/group-reward.ts';
import { INVALID_ACTION_KEY, type Decision, type ScoredGroup } from './types.ts';

/**
 * One ScoredGroup per `groupId` (a trajectory without one forms its own group, keyed by its id),
 * groups in order of first appearance, samples in `sample` order. Turn rewards are the turns'
 * rewards; any part of the trajectory's reward not earned by a turn (a judge or rubric that
 * scores the whole episode) is added to the last turn, when the episode ends and it is known,
 * so Σ turnRewards = reward. Trajectories of a group that a group reward part left unscored
 * (isGroupUnscored) are left out: no score is invented for them. Which other trajectories to train
 * on (e.g. not `failed` ones) is the caller's choice. Each sample's `decisions` (the observation
 * and the action of every turn) are what the tree and critic estimators compare.
 */
export function scoredGroupsFromTrajectories(trajectories: readonly Trajectory[]): ScoredGroup[] {
  const byGroup = new Map<string, Trajectory[]>();
  for (const t of trajectories) {
    // A group reward part (an LLM judge) could not score its group: its reward is incomplete.
    if (isGroupUnscored(t)) continue;
    const key = t.groupId ?? t.id;
    const members = byGroup.get(key);
    if (members) members.push(t);
    else byGroup.set(key, [t]);
  }
  return [...byGroup].map(([groupId, members]) => ({
    groupId,
    samples: [...members]
      .sort((a, b) => a.sample - b.sample)
      .map((t) => ({ trajectoryId: t.id, reward: t.reward, turnRewards: turnRewardsWithResidual(t), decisions: t.turns.map(decision) })),
  }));
}

function turnRewardsWithResidual(t: Trajectory): number[] {
  const rewards = t.turns.map((turn) => turn.reward);
  if (rewards.length === 0) return rewards;
  const residual = t.reward - rewards.reduce((a, b) => a + b, 0);
  rewards[rewards.length - 1] += residual;
  return rewards;
}

/**
 * A turn's observation (and the env's state, where the turn recorded it) and what the env received:
 * the action calls (name and arguments, key order ignored), or an invalid answer.
 */
function decision(turn: Turn): Decision {
  const action = turn.invalid ? INVALID_ACTION_KEY : JSON.stringify(turn.actions.map((c) => [c.name, canonical(c.arguments)]));
  return { state: turn.observation, action, ...(turn.state ? { envState: canonicalJson(turn.state) } : {}) };
}

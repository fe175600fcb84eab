/**
 * A dense env's exact action values looked up for sampled answers (DESIGN rule 5): the agent loop
 * scores the samples of a decision with them (EpisodeSettings.decisionSamples), and
 * advantage/dense.ts turns those scores into per-decision advantages.
 */
import { canonicalJson } from '../core/canonical.ts';
import type { Action, ActionValue } from './env.ts';

/**
 * The exact reward of each sampled action, looked up in the env's `actionRewards()` by tool name
 * and arguments (key order ignored). `null` marks a sample that was not a legal action (it did
 * not parse, or `env.validate` rejected it): it scores `invalidReward`, the env's penalty.
 * A non-null action missing from the table means the caller skipped validation: that throws.
 */
export function sampledActionRewards(
  actionRewards: readonly ActionValue[],
  sampled: readonly (Action | null)[],
  invalidReward: number,
): number[] {
  if (!Number.isFinite(invalidReward)) throw new Error(`invalidReward: must be a finite number, got ${invalidReward}`);
  const table = new Map<string, number>();
  actionRewards.forEach(({ action, expectedReward }, i) => {
    if (typeof expectedReward !== 'number' || !Number.isFinite(expectedReward)) {
      throw new Error(`env actionRewards().${i}.expectedReward: must be a finite number, got ${String(expectedReward)}`);
    }
    const key = actionKey(action);
    if (table.has(key)) throw new Error(`env actionRewards().${i}.action: ${key} is listed twice`);
    table.set(key, expectedReward);
  });
  return sampled.map((action, j) => {
    if (action === null) return invalidReward;
    const reward = table.get(actionKey(action));
    if (reward === undefined) {
      throw new Error(
        `sampled.${j}: ${actionKey(action)} is not among the env's scored actions; pass null for an action env.validate rejects`,
      );
    }
    return reward;
  });
}

/** `name(arguments)` with object keys sorted at every depth, so equal actions give equal keys. */
function actionKey(action: Action): string {
  return `${action.name}(${canonicalJson(action.arguments)})`;
}

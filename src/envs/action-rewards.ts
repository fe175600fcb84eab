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
 * not parse, or `env.validate` rejected it): it scores `invalidScore` (the env's penalty, or
 * below the worst legal action). A non-null action missing from the table means the caller
 * skipped validation: that throws.
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
  const invalid = invalidScore(invalidReward, [...table.values()]);
  return sampled.map((action, j) => {
    if (action === null) return invalid;
    const reward = table.get(actionKey(action));
    if (reward === undefined) {
      throw new Error(
        `sampled.${j}: ${actionKey(action)} is not among the env's scored actions; pass null for an action env.validate rejects`,
      );
    }
    return reward;
  });
}

/**
 * What an illegal answer scores among a decision's answers: the env's penalty, unless some legal
 * action expects less; then the worst legal action's reward less the penalty's size. An illegal
 * answer must never beat a legal one, or the policy learns to dodge a bad decision by answering
 * illegally: kelly's penalty is −1 but staking 95 % at p 0.4, b 0.5 expects −1.64, and
 * newsvendor's −50 is above the worst order in 34 % of its decisions (a dense kelly run went
 * from 17 % to 72 % illegal answers in 11 steps).
 */
export function invalidScore(penalty: number, legalRewards: readonly number[]): number {
  if (legalRewards.length === 0) return penalty;
  const worst = Math.min(...legalRewards);
  return penalty < worst ? penalty : worst - Math.abs(penalty);
}

/** `name(arguments)` with object keys sorted at every depth, so equal actions give equal keys. */
function actionKey(action: Action): string {
  return `${action.name}(${canonicalJson(action.arguments)})`;
}

/**
 * The market oracle: the legal action that maximises this tick's exact expected reward, E[pnl] + risk,
 * given the known drifts and volatilities. Without trading costs a tick's reward depends only on the
 * positions held through it, so this myopic rule is the expected-reward-optimal choice for the tick; over
 * an episode it is close to optimal but not exactly so, because one trade per tick (of at most maxTrade
 * shares) may need several ticks to reach the best positions, and it does not plan that path ahead.
 */
import type { Action } from '../env.ts';

export interface ScoredAction {
  action: Action;
  expectedReward: number;
}

/** The best-scoring action; on ties the earlier one (so waiting wins ties, as it is listed first). */
export function bestAction(scored: readonly ScoredAction[]): ScoredAction {
  return scored.reduce((best, s) => (s.expectedReward > best.expectedReward + 1e-12 ? s : best));
}

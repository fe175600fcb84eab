/** The optimal move at a Nim position, given how the opponent plays. */
import type { OracleAdvice } from '../env.ts';
import { takeAction } from './actions.ts';
import { bestMoveVsRandom } from './expectimax.ts';
import { boutonMove, stallingMove } from './rules.ts';

export type NimOpponent = 'optimal' | 'random';

/**
 * Bouton's move wins from any position with a nonzero nim-sum, whatever the opponent does. From a
 * lost position the perfect opponent wins anyway (stall: take 1 from the largest heap), while a
 * random one may err: then play the move of highest expected return (expectimax).
 * `winProbability` is the agent's chance of winning from here under optimal play.
 */
export function nimOracle(heaps: readonly number[], opponent: NimOpponent): OracleAdvice {
  const winning = boutonMove(heaps);
  if (winning) return { action: takeAction(winning), forecasts: { winProbability: 1 } };
  if (opponent === 'optimal') return { action: takeAction(stallingMove(heaps)), forecasts: { winProbability: 0 } };
  const best = bestMoveVsRandom(heaps);
  return { action: takeAction(best.move), forecasts: { winProbability: (best.value + 1) / 2 } };
}

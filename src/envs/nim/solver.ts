/**
 * Exact expected returns for Nim: of the optimal agent (Bouton against the perfect opponent,
 * expectimax against the random one) and of any DecisionRule, averaged over the options' starts
 * (per first mover: with `starts: 'winning'` the two movers start from different heaps).
 */
import type { DecisionRule, DecisionView } from '../env.ts';
import { parseTake, takeAction } from './actions.ts';
import { agentValueVsRandom, opponentValueVsRandom } from './expectimax.ts';
import { nimOracle, type NimOpponent } from './oracle.ts';
import type { NimOptions } from './options.ts';
import { applyMove, isCleared, legalMoves, nimSum, perfectMove, type NimMove } from './rules.ts';
import { firstMovers, orderedStarts, orderedStateBound, unorderedStarts } from './starts.ts';

/** Largest number of ordered positions policyReturn will enumerate. */
export const NIM_POLICY_STATE_LIMIT = 250_000;

/** The agent's optimal expected return with the agent to move. */
function optimalAgentValue(heaps: readonly number[], opponent: NimOpponent): number {
  if (opponent === 'random') return agentValueVsRandom(heaps);
  return nimSum(heaps) !== 0 ? 1 : -1;
}

/** The agent's optimal expected return with the opponent to move. */
function optimalOpponentValue(heaps: readonly number[], opponent: NimOpponent): number {
  if (opponent === 'random') return opponentValueVsRandom(heaps);
  const after = applyMove(heaps, perfectMove(heaps));
  return isCleared(after) ? -1 : optimalAgentValue(after, opponent);
}

export function nimOptimalReturn(options: NimOptions): number {
  let total = 0;
  for (const { agentFirst, p: pFirst } of firstMovers(options)) {
    const value = agentFirst ? optimalAgentValue : optimalOpponentValue;
    for (const { heaps, p } of unorderedStarts(options, agentFirst)) total += pFirst * p * value(heaps, options.opponent);
  }
  return total;
}

/** A solver's view of the agent's decision: the same state as the live env's. */
export function nimDecisionView(heaps: readonly number[], opponent: NimOpponent): DecisionView {
  return {
    legalActions: () => legalMoves(heaps).map(takeAction),
    state: () => ({ heaps: [...heaps] }),
    oracle: () => nimOracle(heaps, opponent),
  };
}

/** The rule's distribution over moves at these heaps, rejecting illegal actions and non-distributions. */
function ruleMoves(rule: DecisionRule, heaps: readonly number[], opponent: NimOpponent): { move: NimMove; p: number }[] {
  const where = `decision rule at heaps [${heaps.join(', ')}]`;
  const out: { move: NimMove; p: number }[] = [];
  let total = 0;
  for (const { action, p } of rule(nimDecisionView(heaps, opponent))) {
    if (!Number.isFinite(p) || p < 0) throw new RangeError(`${where}: probability ${p} is not a finite number >= 0`);
    const parsed = parseTake(heaps, action);
    if ('error' in parsed) throw new RangeError(`${where}: ${parsed.error}`);
    out.push({ move: parsed.move, p });
    total += p;
  }
  if (Math.abs(total - 1) > 1e-6) throw new RangeError(`${where}: probabilities sum to ${total}, not 1`);
  return out;
}

/** The exact expected return of a DecisionRule (it may depend on the heaps' order). */
export function nimPolicyReturn(options: NimOptions, rule: DecisionRule): number {
  const bound = orderedStateBound(options);
  if (bound > NIM_POLICY_STATE_LIMIT) {
    throw new RangeError(
      `nim policyReturn: up to ${bound} positions exceed the exact-evaluation limit of ${NIM_POLICY_STATE_LIMIT}; use smaller heaps`,
    );
  }
  const { opponent } = options;
  const agentMemo = new Map<string, number>();
  const opponentMemo = new Map<string, number>();

  const agentValue = (heaps: number[]): number => {
    const key = heaps.join(',');
    const cached = agentMemo.get(key);
    if (cached !== undefined) return cached;
    let value = 0;
    for (const { move, p } of ruleMoves(rule, heaps, opponent)) {
      if (p === 0) continue;
      const after = applyMove(heaps, move);
      value += p * (isCleared(after) ? 1 : opponentValue(after));
    }
    agentMemo.set(key, value);
    return value;
  };

  const opponentValue = (heaps: number[]): number => {
    const key = heaps.join(',');
    const cached = opponentMemo.get(key);
    if (cached !== undefined) return cached;
    const moves = opponent === 'optimal' ? [perfectMove(heaps)] : legalMoves(heaps);
    let value = 0;
    for (const move of moves) {
      const after = applyMove(heaps, move);
      value += isCleared(after) ? -1 : agentValue(after);
    }
    value /= moves.length;
    opponentMemo.set(key, value);
    return value;
  };

  let total = 0;
  for (const { agentFirst, p: pFirst } of firstMovers(options)) {
    const value = agentFirst ? agentValue : opponentValue;
    for (const { heaps, p } of orderedStarts(options, agentFirst)) total += pFirst * p * value(heaps);
  }
  return total;
}

/**
 * Exact values of Nim against an opponent who picks uniformly among its legal moves, for an agent
 * who maximises its expected return (+1 win, -1 loss). Values do not depend on the heaps' order
 * or on empty heaps, so they are memoised on the sorted nonzero sizes.
 */
import { applyMove, isCleared, legalMoves, type NimMove } from './rules.ts';

const agentMemo = new Map<string, number>();
const opponentMemo = new Map<string, number>();

function canonical(heaps: readonly number[]): number[] {
  return heaps.filter((h) => h > 0).sort((a, b) => a - b);
}

/** Expected return with the agent to move (the position is not cleared). */
export function agentValueVsRandom(heaps: readonly number[]): number {
  const c = canonical(heaps);
  const key = c.join(',');
  const cached = agentMemo.get(key);
  if (cached !== undefined) return cached;
  let best = -Infinity;
  for (const move of legalMoves(c)) {
    const after = applyMove(c, move);
    best = Math.max(best, isCleared(after) ? 1 : opponentValueVsRandom(after));
    if (best === 1) break;
  }
  agentMemo.set(key, best);
  return best;
}

/** Expected return for the agent with the random opponent to move (the position is not cleared). */
export function opponentValueVsRandom(heaps: readonly number[]): number {
  const c = canonical(heaps);
  const key = c.join(',');
  const cached = opponentMemo.get(key);
  if (cached !== undefined) return cached;
  const moves = legalMoves(c);
  let total = 0;
  for (const move of moves) {
    const after = applyMove(c, move);
    total += isCleared(after) ? -1 : agentValueVsRandom(after);
  }
  const value = total / moves.length;
  opponentMemo.set(key, value);
  return value;
}

/** The agent's expectimax-best move on these (ordered) heaps; the first best in legalMoves order. */
export function bestMoveVsRandom(heaps: readonly number[]): { move: NimMove; value: number } {
  let best: { move: NimMove; value: number } | null = null;
  for (const move of legalMoves(heaps)) {
    const after = applyMove(heaps, move);
    const value = isCleared(after) ? 1 : opponentValueVsRandom(after);
    if (!best || value > best.value + 1e-12) best = { move, value };
  }
  if (!best) throw new Error('nim: no move from a cleared position');
  return best;
}

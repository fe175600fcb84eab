/**
 * The `format` reward: did the turn end in exactly one well-formed tool call?
 *   +1  one action call parsed (whether or not the env then found it legal: that is the env's business)
 *    0  no parse error but not exactly one action (e.g. several calls in one answer)
 *   −1  the final answer could not be parsed into a tool call (no call, bad JSON, unknown tool, bad arguments)
 */
import type { Turn } from '../core/trajectory.ts';
import type { TurnReward } from './reward.ts';

export function formatScore(turn: Turn): number {
  if (turn.parseError) return -1;
  return turn.actions.length === 1 ? 1 : 0;
}

export function formatReward(): TurnReward {
  return { name: 'format', score: formatScore };
}

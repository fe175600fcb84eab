/**
 * The `reasoning` reward, in [0, 1]: half for a reasoning segment of sensible length (minWords..maxWords
 * words), half for mentioning the chosen action: its tool name (e.g. "buy", or "guess state" for
 * guess_state) or one of its string arguments (e.g. the asset "ACME"). A turn without an action scores 0.
 */
import type { Turn } from '../core/trajectory.ts';
import type { TurnReward } from './reward.ts';
import { countWords, finalCall, reasoningText } from './turn-text.ts';

export interface ReasoningRewardOptions {
  minWords: number;
  maxWords: number;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `text` mentions `term` at the start of a word, case-insensitively ("buying" mentions "buy"). */
function mentions(text: string, term: string): boolean {
  return term.trim() !== '' && new RegExp(`(^|[^A-Za-z0-9_])${escape(term)}`, 'i').test(text);
}

export function reasoningScore(turn: Turn, o: ReasoningRewardOptions): number {
  const call = finalCall(turn);
  const action = turn.actions[0];
  if (!call || !action) return 0;
  const text = reasoningText(call);
  const words = countWords(text);
  const sensibleLength = words >= o.minWords && words <= o.maxWords && words > 0;
  const terms = [action.name, action.name.replaceAll('_', ' '), ...Object.values(action.arguments).filter((v): v is string => typeof v === 'string')];
  const mentionsAction = terms.some((t) => mentions(text, t));
  return (sensibleLength ? 0.5 : 0) + (mentionsAction ? 0.5 : 0);
}

export function reasoningReward(o: ReasoningRewardOptions): TurnReward {
  if (!(o.minWords >= 0 && o.maxWords >= o.minWords)) {
    throw new Error(`reasoning reward: need 0 <= minWords <= maxWords (got ${o.minWords}, ${o.maxWords})`);
  }
  return { name: 'reasoning', score: (turn) => reasoningScore(turn, o) };
}

/**
 * The row length of a run's training layouts, measured from the warm start's demonstrations when
 * the config leaves it open: long enough for 99 % of the demonstrated episodes (packed as one
 * sequence each), so a multi-turn env's later decisions are trained too. A fixed 128 left most of a
 * 10-pull bandit episode out (its packed conversation is ~400 tokens); a length set by the single
 * longest episode would make every row pay for a rare outlier (attention grows with the square).
 */
import { sharedPrefixLength, type LayoutSample } from './rl-batch.ts';

/** Share of demonstrated episodes a row must hold. */
const COVERED = 0.99;
const MULTIPLE = 32;
const MIN_LENGTH = 64;

function coveringLength(lengths: number[], cap: number): number {
  const sorted = [...lengths].sort((a, b) => a - b);
  const at = sorted[Math.min(sorted.length - 1, Math.ceil(COVERED * sorted.length) - 1)];
  return Math.min(cap, Math.max(MIN_LENGTH, Math.ceil(at / MULTIPLE) * MULTIPLE));
}

/**
 * Row lengths for the warm start (its language-model samples share no prefix: whole sequences) and
 * for RL (positions behind the shared system turn), each capped at `cap` (the model's context).
 */
export function measuredRowLengths(demos: readonly LayoutSample[], cap: number): { warmStart: number; rl: number } {
  if (demos.length === 0) throw new Error('measuredRowLengths: no demonstrations');
  // The tokens every demonstration starts with (the system turn RL shares as its prefix); their
  // masks are left out, as RL's samples train no token of it.
  const prefix = sharedPrefixLength(demos.map((s) => ({ tokens: s.tokens, lossMask: [] })));
  return {
    warmStart: coveringLength(demos.map((s) => s.tokens.length - 1), cap),
    rl: coveringLength(demos.map((s) => s.tokens.length - 1 - prefix), cap),
  };
}

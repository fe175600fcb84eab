/**
 * The exact expected return of a deterministic Blackjack move table in which some states have no legal
 * answer: there the episode ends at once with the env's invalid-action penalty (blackjack's rule is
 * `end`, −1). Otherwise the same recursion as the env's solver: sticking settles against the dealer's
 * outcome distribution, hitting draws from the infinite deck, and the value from the deal averages over
 * the dealer's card and the player's two cards (a natural is its own decision).
 */
import type { BlackjackMove } from '../envs/blackjack/actions.ts';
import { addCard, CARD_PROBABILITIES, handValue, isNatural, type BlackjackRules } from '../envs/blackjack/rules.ts';
import { blackjackStateKey, stickValue, type BlackjackDecision } from '../envs/blackjack/solver.ts';

/** A table's answer at a state: a move, or no legal action. */
export type TableMove = BlackjackMove | 'invalid';

export interface TableValue {
  expectedReturn: number;
  win: number;
  draw: number;
  loss: number;
  /** Probability that the episode ends on an invalid answer. */
  invalid: number;
}

const ZERO: TableValue = { expectedReturn: 0, win: 0, draw: 0, loss: 0, invalid: 0 };
const BUST: TableValue = { expectedReturn: -1, win: 0, draw: 0, loss: 1, invalid: 0 };

function addScaled(acc: TableValue, p: number, v: TableValue): TableValue {
  return {
    expectedReturn: acc.expectedReturn + p * v.expectedReturn,
    win: acc.win + p * v.win,
    draw: acc.draw + p * v.draw,
    loss: acc.loss + p * v.loss,
    invalid: acc.invalid + p * v.invalid,
  };
}

/** Exact value of `moves` (by blackjackStateKey) from the deal; a state missing from the table is an error. */
export function moveTableValue(rules: BlackjackRules, moves: Readonly<Record<string, TableMove>>, invalidPenalty: number): TableValue {
  const forfeit: TableValue = {
    expectedReturn: invalidPenalty,
    win: invalidPenalty > 0 ? 1 : 0,
    draw: invalidPenalty === 0 ? 1 : 0,
    loss: invalidPenalty < 0 ? 1 : 0,
    invalid: 1,
  };
  const memo = new Map<string, TableValue>();
  const value = (d: BlackjackDecision): TableValue => {
    const memoKey = `${d.playerSum}|${d.usableAce}|${d.dealerCard}|${d.natural}`;
    const cached = memo.get(memoKey);
    if (cached) return cached;
    const key = blackjackStateKey(d);
    const move = moves[key];
    let v: TableValue;
    if (move === 'invalid') {
      v = forfeit;
    } else if (move === 'stick') {
      const s = stickValue(d, rules);
      v = { ...s, invalid: 0 };
    } else if (move === 'hit') {
      v = ZERO;
      for (const { card, p } of CARD_PROBABILITIES) {
        const next = addCard({ sum: d.playerSum, usableAce: d.usableAce }, card);
        v = addScaled(v, p, next.sum > 21 ? BUST : value({ playerSum: next.sum, usableAce: next.usableAce, dealerCard: d.dealerCard, natural: false }));
      }
    } else {
      throw new RangeError(`move table has no entry for ${key}`);
    }
    memo.set(memoKey, v);
    return v;
  };
  let total = ZERO;
  for (const { card: dealerCard, p: pd } of CARD_PROBABILITIES) {
    for (const { card: a, p: pa } of CARD_PROBABILITIES) {
      for (const { card: b, p: pb } of CARD_PROBABILITIES) {
        const hand = handValue([a, b]);
        total = addScaled(total, pd * pa * pb, value({ playerSum: hand.sum, usableAce: hand.usableAce, dealerCard, natural: isNatural([a, b]) }));
      }
    }
  }
  return total;
}

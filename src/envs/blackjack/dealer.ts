/** The exact distribution of the dealer's final hand given the showing card (infinite deck). */
import { addCard, CARD_PROBABILITIES, handValue, type HandValue } from './rules.ts';

export interface DealerOutcomes {
  /** P(the dealer's first two cards are a natural). */
  natural: number;
  /** P(final score = s) for the dealer's non-natural hands; index 0 is bust, otherwise 17..21. */
  score: number[];
}

/** Final score distribution from a non-natural hand value, drawing while the sum is below 17. */
function finalScores(value: HandValue, memo: Map<string, number[]>): number[] {
  const out = new Array<number>(22).fill(0);
  if (value.sum > 21) {
    out[0] = 1;
    return out;
  }
  if (value.sum >= 17) {
    out[value.sum] = 1;
    return out;
  }
  const key = `${value.sum}:${value.usableAce}`;
  const cached = memo.get(key);
  if (cached) return cached;
  for (const { card, p } of CARD_PROBABILITIES) {
    const next = finalScores(addCard(value, card), memo);
    for (let s = 0; s <= 21; s++) out[s] += p * next[s];
  }
  memo.set(key, out);
  return out;
}

function computeDealerOutcomes(showing: number): DealerOutcomes {
  const memo = new Map<string, number[]>();
  const result: DealerOutcomes = { natural: 0, score: new Array<number>(22).fill(0) };
  for (const { card: hidden, p } of CARD_PROBABILITIES) {
    if ((showing === 1 && hidden === 10) || (showing === 10 && hidden === 1)) {
      result.natural += p;
      continue;
    }
    const scores = finalScores(handValue([showing, hidden]), memo);
    for (let s = 0; s <= 21; s++) result.score[s] += p * scores[s];
  }
  return result;
}

const cache = new Map<number, DealerOutcomes>();

/** Dealer outcomes for a showing card 1..10 (computed once per card). */
export function dealerOutcomes(showing: number): DealerOutcomes {
  if (!Number.isInteger(showing) || showing < 1 || showing > 10) {
    throw new RangeError(`dealer showing card must be an integer 1..10, got ${showing}`);
  }
  let outcomes = cache.get(showing);
  if (!outcomes) {
    outcomes = computeDealerOutcomes(showing);
    cache.set(showing, outcomes);
  }
  return outcomes;
}

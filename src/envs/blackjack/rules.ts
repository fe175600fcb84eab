/**
 * Blackjack rules as in Gymnasium Blackjack-v1: an infinite deck, hand values, the dealer's
 * drawing rule and the settlement of a finished hand. The env and the exact solver share them.
 */
import type { Rng } from '../../core/random.ts';

/** 1 = ace, 2-9 pip cards, four kinds of ten-valued card (10, J, Q, K). Drawn with replacement. */
export const DECK: readonly number[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10];

/** The distinct card values 1..10 and their probabilities under the infinite deck. */
export const CARD_PROBABILITIES: readonly { card: number; p: number }[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(
  (card) => ({ card, p: card === 10 ? 4 / 13 : 1 / 13 }),
);

export interface BlackjackRules {
  /** A winning natural pays 1.5 (ignored when `sab`). */
  natural: boolean;
  /** Sutton & Barto: a player natural against a dealer without one wins +1 at once. */
  sab: boolean;
}

export type Outcome = 'win' | 'loss' | 'draw';

export function drawCard(rng: Rng): number {
  return DECK[rng.int(DECK.length)];
}

/** A hand's value: `sum` counts one ace as 11 when that does not bust (`usableAce`). */
export interface HandValue {
  sum: number;
  usableAce: boolean;
}

export function handValue(cards: readonly number[]): HandValue {
  let raw = 0;
  let hasAce = false;
  for (const card of cards) {
    raw += card;
    if (card === 1) hasAce = true;
  }
  const usableAce = hasAce && raw + 10 <= 21;
  return { sum: usableAce ? raw + 10 : raw, usableAce };
}

/**
 * The value after one more card, from the value alone: a hard total of 12 or more can hold an
 * ace only as 1 forever, and a hard total of 11 or less holds no ace, so (sum, usableAce) is Markov.
 */
export function addCard(value: HandValue, card: number): HandValue {
  const raw = (value.usableAce ? value.sum - 10 : value.sum) + card;
  const usableAce = (value.usableAce || card === 1) && raw + 10 <= 21;
  return { sum: usableAce ? raw + 10 : raw, usableAce };
}

export function isNatural(cards: readonly number[]): boolean {
  return cards.length === 2 && cards.includes(1) && cards.includes(10);
}

/** The dealer draws while below 17, counting a usable ace as 11 (so stands on soft 17). */
export function dealerDraws(cards: readonly number[]): boolean {
  return handValue(cards).sum < 17;
}

/** A hand's score: its sum, or 0 when bust. */
export function score(cards: readonly number[]): number {
  const { sum } = handValue(cards);
  return sum > 21 ? 0 : sum;
}

/** The player's reward after sticking, from both scores (0 = bust) and natural flags (Gymnasium's order of checks). */
export function settleScores(
  player: { score: number; natural: boolean },
  dealer: { score: number; natural: boolean },
  rules: BlackjackRules,
): number {
  const base = Math.sign(player.score - dealer.score);
  if (rules.sab && player.natural && !dealer.natural) return 1;
  if (!rules.sab && rules.natural && player.natural && base === 1) return 1.5;
  return base;
}

export function settle(playerCards: readonly number[], dealerCards: readonly number[], rules: BlackjackRules): number {
  return settleScores(
    { score: score(playerCards), natural: isNatural(playerCards) },
    { score: score(dealerCards), natural: isNatural(dealerCards) },
    rules,
  );
}

export function outcomeOf(reward: number): Outcome {
  return reward > 0 ? 'win' : reward < 0 ? 'loss' : 'draw';
}

export function cardName(card: number): string {
  return card === 1 ? 'A' : String(card);
}

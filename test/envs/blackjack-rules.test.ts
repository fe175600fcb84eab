import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dealerOutcomes } from '../../src/envs/blackjack/dealer.ts';
import {
  addCard,
  CARD_PROBABILITIES,
  dealerDraws,
  DECK,
  handValue,
  isNatural,
  score,
  settle,
} from '../../src/envs/blackjack/rules.ts';

const DEFAULT = { natural: false, sab: false };
const NATURAL = { natural: true, sab: false };
const SAB = { natural: false, sab: true };

test('the deck is Gymnasium infinite deck: 1..9 once, ten-cards four times', () => {
  assert.deepEqual([...DECK], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10]);
  const total = CARD_PROBABILITIES.reduce((acc, c) => acc + c.p, 0);
  assert.ok(Math.abs(total - 1) < 1e-12);
  assert.equal(CARD_PROBABILITIES.find((c) => c.card === 10)!.p, 4 / 13);
});

test('an ace counts 11 while that does not bust, then 1', () => {
  assert.deepEqual(handValue([1, 6]), { sum: 17, usableAce: true });
  assert.deepEqual(handValue([1, 6, 10]), { sum: 17, usableAce: false });
  assert.deepEqual(handValue([1, 1]), { sum: 12, usableAce: true });
  assert.deepEqual(handValue([1, 1, 10]), { sum: 12, usableAce: false });
  assert.deepEqual(handValue([1, 10]), { sum: 21, usableAce: true });
  assert.deepEqual(handValue([10, 6, 8]), { sum: 24, usableAce: false });
  assert.equal(score([10, 6, 8]), 0, 'a bust hand scores 0');
  assert.equal(score([10, 9]), 19);
});

test('addCard on (sum, usable ace) agrees with the full hand for every sequence of up to 5 cards', () => {
  const values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  let checked = 0;
  const walk = (cards: number[]): void => {
    const value = handValue(cards);
    if (value.sum > 21 || cards.length === 5) return;
    for (const card of values) {
      const next = [...cards, card];
      assert.deepEqual(addCard(value, card), handValue(next), `hand ${next.join(',')}`);
      checked++;
      walk(next);
    }
  };
  for (const a of values) for (const b of values) walk([a, b]);
  assert.ok(checked > 10_000);
});

test('a natural is exactly an ace and a ten-card as two cards', () => {
  assert.equal(isNatural([1, 10]), true);
  assert.equal(isNatural([10, 1]), true);
  assert.equal(isNatural([1, 5, 5]), false, 'a three-card 21 is not a natural');
  assert.equal(isNatural([1, 9]), false);
});

test('the dealer draws below 17 and stands on soft 17', () => {
  assert.equal(dealerDraws([10, 6]), true);
  assert.equal(dealerDraws([1, 5]), true, 'soft 16 draws');
  assert.equal(dealerDraws([1, 6]), false, 'soft 17 stands');
  assert.equal(dealerDraws([1, 6, 10]), false, 'hard 17 stands');
  assert.equal(dealerDraws([1, 5, 10]), true, 'hard 16 after the ace turned to 1 draws');
});

test('settlement follows Gymnasium for every rule variant', () => {
  const cases: { player: number[]; dealer: number[]; rewards: [number, number, number] }[] = [
    { player: [10, 9], dealer: [10, 8], rewards: [1, 1, 1] },
    { player: [10, 8], dealer: [10, 8], rewards: [0, 0, 0] },
    { player: [10, 7], dealer: [10, 8], rewards: [-1, -1, -1] },
    { player: [10, 7], dealer: [10, 6, 8], rewards: [1, 1, 1] },
    // Natural against a non-natural dealer hand that does not reach 21: natural pays 1.5.
    { player: [1, 10], dealer: [10, 7], rewards: [1, 1.5, 1] },
    // Natural against a drawn dealer 21: a draw, except sab where the natural wins.
    { player: [1, 10], dealer: [10, 6, 5], rewards: [0, 0, 1] },
    // Both naturals: a draw everywhere.
    { player: [1, 10], dealer: [10, 1], rewards: [0, 0, 0] },
    // A three-card 21 against a dealer natural: equal scores, a draw (the reverse rule does not apply).
    { player: [10, 5, 6], dealer: [1, 10], rewards: [0, 0, 0] },
    // A player natural against a busting dealer.
    { player: [10, 1], dealer: [10, 6, 9], rewards: [1, 1.5, 1] },
  ];
  for (const { player, dealer, rewards } of cases) {
    const got = [settle(player, dealer, DEFAULT), settle(player, dealer, NATURAL), settle(player, dealer, SAB)];
    assert.deepEqual(got, rewards, `player ${player} vs dealer ${dealer}`);
  }
  // sab overrides natural.
  assert.equal(settle([1, 10], [10, 7], { natural: true, sab: true }), 1);
});

test('dealer final distributions sum to 1 and match the published S17 infinite-deck bust rates', () => {
  // Dealer bust probability by up-card (standing on soft 17, infinite deck).
  const bust: Record<number, number> = { 2: 0.35361, 3: 0.37387, 4: 0.39447, 5: 0.4164, 6: 0.42315, 7: 0.26231, 8: 0.24474, 9: 0.22843 };
  for (let card = 1; card <= 10; card++) {
    const o = dealerOutcomes(card);
    const total = o.natural + o.score.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(total - 1) < 1e-12, `card ${card} sums to ${total}`);
    for (let s = 1; s < 17; s++) assert.equal(o.score[s], 0, `dealer never ends on ${s}`);
    if (bust[card] !== undefined) assert.ok(Math.abs(o.score[0] - bust[card]) < 1e-5, `bust rate vs ${card}: ${o.score[0]}`);
  }
  assert.ok(Math.abs(dealerOutcomes(1).natural - 4 / 13) < 1e-12);
  assert.ok(Math.abs(dealerOutcomes(10).natural - 1 / 13) < 1e-12);
  assert.equal(dealerOutcomes(5).natural, 0);
  assert.throws(() => dealerOutcomes(11), /1\.\.10/);
});

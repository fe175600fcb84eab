import assert from 'node:assert/strict';
import { test } from 'node:test';
import { meanCi } from '../../src/core/stats.ts';
import type { Action, EnvStep } from '../../src/envs/env.ts';
import { BlackjackEnv } from '../../src/envs/blackjack/env.ts';
import { evaluateBlackjackRule, solveBlackjack } from '../../src/envs/blackjack/solver.ts';
import type { BlackjackRules } from '../../src/envs/blackjack/rules.ts';

const DEFAULT = { natural: false, sab: false };
const NATURAL = { natural: true, sab: false };
const SAB = { natural: false, sab: true };
const STICK: Action = { name: 'stick', arguments: {} };
const HIT: Action = { name: 'hit', arguments: {} };

/** The test's own hand arithmetic: an ace counts 11 when that keeps the total at 21 or less. */
function total(cards: number[]): { sum: number; soft: boolean } {
  const raw = cards.reduce((a, b) => a + b, 0);
  const soft = cards.includes(1) && raw + 10 <= 21;
  return { sum: soft ? raw + 10 : raw, soft };
}

const HAND = /Your hand: ([A0-9, ]+) \(sum (\d+), (usable ace|no usable ace)\)\. Dealer shows: (A|\d+)\.$/;

function parseHand(observation: string): { cards: number[]; sum: number; usable: boolean; dealer: number } {
  const m = HAND.exec(observation);
  assert.ok(m, `observation does not show the hand: ${observation}`);
  const card = (s: string): number => (s === 'A' ? 1 : Number(s));
  return { cards: m[1].split(', ').map(card), sum: Number(m[2]), usable: m[3] === 'usable ace', dealer: card(m[4]) };
}

function play(env: BlackjackEnv, seed: number, moves: (i: number) => Action): EnvStep {
  env.reset(seed);
  for (let i = 0; ; i++) {
    const step = env.step(moves(i));
    if (step.done) return step;
  }
}

test('the first observation shows the hand, its sum, the usable ace and the dealer card, as state() does', () => {
  const env = new BlackjackEnv(DEFAULT);
  const first = env.reset(3);
  assert.deepEqual(first.tools.map((t) => t.name), ['stick', 'hit']);
  for (let seed = 0; seed < 200; seed++) {
    const hand = parseHand(env.reset(seed).observation);
    assert.equal(hand.cards.length, 2);
    const { sum, soft } = total(hand.cards);
    assert.deepEqual(env.state(), { playerSum: sum, dealerCard: hand.dealer, usableAce: soft });
    assert.equal(hand.sum, sum);
    assert.equal(hand.usable, soft);
  }
  assert.match(env.reset(0).observation, /^Your hand: .+\. Dealer shows: (A|[2-9]|10)\.$/);
});

test('a seed deals the same cards whatever is played', () => {
  const env = new BlackjackEnv(DEFAULT);
  const deals = new Set<string>();
  for (let seed = 0; seed < 300; seed++) {
    const allHits = play(env, seed, () => HIT);
    const stickNow = play(env, seed, () => STICK);
    const hitOnce = play(env, seed, (i) => (i === 0 ? HIT : STICK));
    const playerCards = allHits.info!.playerCards as number[];
    const dealerCards = stickNow.info!.dealerCards as number[];
    assert.deepEqual(stickNow.info!.playerCards, playerCards.slice(0, 2), `seed ${seed}`);
    assert.deepEqual(hitOnce.info!.playerCards, playerCards.slice(0, 3), `seed ${seed}`);
    if (hitOnce.info!.dealerCards) {
      const dealt = hitOnce.info!.dealerCards as number[];
      const stuck = total(playerCards.slice(0, 3)).sum <= 21;
      // After a bust the dealer's hole card is never played out; after a stick it plays out the same cards.
      if (stuck) assert.deepEqual(dealt, dealerCards, `seed ${seed}`);
      else assert.deepEqual(dealt, dealerCards.slice(0, 2), `seed ${seed}`);
    }
    deals.add(`${playerCards.slice(0, 2)}|${dealerCards[0]}`);
  }
  assert.ok(deals.size > 100, 'different seeds deal different hands');
});

test('hitting past 21 loses -1 at once and ends the episode', () => {
  const env = new BlackjackEnv(DEFAULT);
  const step = play(env, 11, () => HIT);
  assert.equal(step.reward, -1);
  assert.deepEqual(step.rewardParts, { outcome: -1 });
  assert.equal(step.info!.outcome, 'loss');
  assert.ok(total(step.info!.playerCards as number[]).sum > 21);
  assert.match(step.observation, /sum \d+, bust\)\. You lose \(-1\)\.$/);
  assert.deepEqual(env.legalActions(), []);
  assert.equal(env.validate(STICK), 'the hand is over');
  assert.throws(() => env.step(STICK), /the hand is over/);
});

test('a soft hand counts its ace as 11, then as 1 when the next card would bust it', () => {
  const env = new BlackjackEnv(DEFAULT);
  let softened = 0;
  for (let seed = 0; seed < 400; seed++) {
    let hand = parseHand(env.reset(seed).observation);
    let wasSoft = hand.usable;
    for (;;) {
      const step = env.step(HIT);
      if (step.done) break;
      hand = parseHand(step.observation);
      const expected = total(hand.cards);
      assert.equal(hand.sum, expected.sum, `seed ${seed}: ${step.observation}`);
      assert.equal(hand.usable, expected.soft, `seed ${seed}: ${step.observation}`);
      if (wasSoft && !hand.usable) softened++;
      wasSoft = hand.usable;
    }
  }
  assert.ok(softened > 10, `soft hands that turned hard without busting: ${softened}`);
});

test('the dealer draws below 17, stands on soft 17, and the higher total wins', () => {
  const env = new BlackjackEnv(DEFAULT);
  let soft17 = 0;
  const outcomes = new Set<unknown>();
  for (let seed = 0; seed < 3000; seed++) {
    const step = play(env, seed, () => STICK);
    const dealer = step.info!.dealerCards as number[];
    const player = step.info!.playerCards as number[];
    for (let n = 2; n < dealer.length; n++) assert.ok(total(dealer.slice(0, n)).sum < 17, `seed ${seed}: drew on ${dealer.slice(0, n)}`);
    const final = total(dealer);
    assert.ok(final.sum >= 17, `seed ${seed}: stood on ${final.sum}`);
    if (final.sum === 17 && final.soft) soft17++;
    const playerScore = total(player).sum;
    const dealerScore = final.sum > 21 ? 0 : final.sum;
    assert.equal(step.reward, Math.sign(playerScore - dealerScore), `seed ${seed}`);
    assert.equal(step.info!.outcome, step.reward > 0 ? 'win' : step.reward < 0 ? 'loss' : 'draw');
    outcomes.add(step.info!.outcome);
  }
  assert.ok(soft17 > 20, `dealer stood on soft 17 ${soft17} times`);
  assert.deepEqual([...outcomes].sort(), ['draw', 'loss', 'win']);
});

test('naturals pay by the rule variant', () => {
  const seen = { bonus: 0, sabWin: 0, bothNatural: 0 };
  const envs = { d: new BlackjackEnv(DEFAULT), n: new BlackjackEnv(NATURAL), s: new BlackjackEnv(SAB) };
  for (let seed = 0; seed < 12_000; seed++) {
    const first = parseHand(envs.d.reset(seed).observation);
    if (!(first.cards.includes(1) && first.cards.includes(10))) continue;
    const [d, n, s] = [play(envs.d, seed, () => STICK), play(envs.n, seed, () => STICK), play(envs.s, seed, () => STICK)];
    const dealer = d.info!.dealerCards as number[];
    const dealerNatural = dealer.length === 2 && dealer.includes(1) && dealer.includes(10);
    const dealerScore = total(dealer).sum > 21 ? 0 : total(dealer).sum;
    const base = Math.sign(21 - dealerScore);
    assert.equal(d.reward, base, `seed ${seed}`);
    assert.equal(n.reward, base === 1 ? 1.5 : base, `seed ${seed}`);
    assert.equal(s.reward, dealerNatural ? 0 : 1, `seed ${seed}`);
    if (n.reward === 1.5) {
      seen.bonus++;
      assert.match(n.observation, /You win with a natural \(\+1\.5\)\.$/);
      assert.equal(n.info!.outcome, 'win');
    }
    if (base === 0 && !dealerNatural) seen.sabWin++;
    if (dealerNatural) seen.bothNatural++;
  }
  assert.ok(seen.bonus > 100 && seen.sabWin > 5 && seen.bothNatural > 5, JSON.stringify(seen));
});

test('Monte Carlo returns of the env agree with the exact DP', () => {
  // Paired over the same seeds, the variants differ only on natural hands: a sharp check of their payouts.
  const n = 40_000;
  const env = { d: new BlackjackEnv(DEFAULT), n: new BlackjackEnv(NATURAL), s: new BlackjackEnv(SAB) };
  const stick: (rules: BlackjackRules) => number = (rules) => evaluateBlackjackRule(rules, () => [{ action: STICK, p: 1 }]).expectedReturn;
  const naturalDiff = new Float64Array(n);
  const sabDiff = new Float64Array(n);
  const base = new Float64Array(n);
  for (let seed = 0; seed < n; seed++) {
    base[seed] = play(env.d, seed, () => STICK).reward;
    naturalDiff[seed] = play(env.n, seed, () => STICK).reward - base[seed];
    sabDiff[seed] = play(env.s, seed, () => STICK).reward - base[seed];
  }
  const within = (values: Float64Array, exact: number, what: string): void => {
    const { mean, std } = meanCi(values);
    const se = std / Math.sqrt(values.length);
    assert.ok(Math.abs(mean - exact) < 4 * se, `${what}: MC ${mean} vs exact ${exact} (se ${se})`);
  };
  within(base, stick(DEFAULT), 'always stick');
  within(naturalDiff, stick(NATURAL) - stick(DEFAULT), 'natural - default');
  within(sabDiff, stick(SAB) - stick(DEFAULT), 'sab - default');

  // The oracle's own play.
  const oracleReturns = new Float64Array(20_000);
  for (let seed = 0; seed < oracleReturns.length; seed++) {
    oracleReturns[seed] = play(env.d, seed, () => env.d.oracle().action).reward;
  }
  within(oracleReturns, solveBlackjack(DEFAULT).optimal.expectedReturn, 'optimal');
});

test("oracle() gives the solver's optimal move at every decision, a natural included", () => {
  for (const rules of [DEFAULT, NATURAL, SAB]) {
    const env = new BlackjackEnv(rules);
    const solution = solveBlackjack(rules);
    for (let seed = 0; seed < 300; seed++) {
      let hand = parseHand(env.reset(seed).observation);
      for (let i = 0; ; i++) {
        const natural = i === 0 && hand.cards.includes(1) && hand.cards.includes(10);
        const d = { playerSum: hand.sum, usableAce: hand.usable, dealerCard: hand.dealer, natural };
        const advice = env.oracle();
        assert.equal(advice.action.name, solution.optimalMove(d));
        assert.equal(advice.forecasts!.stickValue, solution.actionValues(d).stick.expectedReturn);
        if (natural) assert.equal(advice.action.name, 'stick');
        // Hit twice to reach more states, then follow the oracle.
        const step = env.step(i < 2 ? HIT : advice.action);
        if (step.done) break;
        hand = parseHand(step.observation);
      }
    }
  }
});

test('validate names what is wrong, and invalid actions end the hand with -1', () => {
  const env = new BlackjackEnv(DEFAULT);
  assert.throws(() => env.state(), /reset/);
  env.reset(1);
  assert.equal(env.validate(HIT), null);
  assert.equal(env.validate(STICK), null);
  assert.match(env.validate({ name: 'double', arguments: {} })!, /unknown action 'double': call stick or hit/);
  assert.match(env.validate({ name: 'hit', arguments: { times: 2 } })!, /hit takes no arguments \(got times\)/);
  assert.throws(() => env.step({ name: 'split', arguments: {} }), /unknown action/);
  assert.deepEqual(env.invalidAction, { mode: 'end', penalty: -1, maxRetries: 0 });
  assert.equal(env.kind, 'outcome');
  assert.equal('actionRewards' in env, false);
});

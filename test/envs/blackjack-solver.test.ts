import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinEnvs } from '../../src/envs/builtin.ts';
import { checkEnvSpec } from '../../src/envs/registry.ts';
import { randomPolicy, stickAtPolicy } from '../../src/policy/scripted.ts';
import { Rng } from '../../src/core/random.ts';
import type { Action, DecisionRule } from '../../src/envs/env.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { dealerOutcomes } from '../../src/envs/blackjack/dealer.ts';
import {
  allBlackjackDecisions,
  blackjackDecisionView,
  blackjackStateKey,
  evaluateBlackjackRule,
  ruleFromMoveTable,
  solveBlackjack,
  type BlackjackState,
} from '../../src/envs/blackjack/solver.ts';
import type { BlackjackMove } from '../../src/envs/blackjack/actions.ts';

const DEFAULT = { natural: false, sab: false };
const NATURAL = { natural: true, sab: false };
const SAB = { natural: false, sab: true };

const move = (name: BlackjackMove): Action => ({ name, arguments: {} });
const randomRule: DecisionRule = (view) => view.legalActions().map((action) => ({ action, p: 0.5 }));
const stickAt17: DecisionRule = (view) => [{ action: move((view.state().playerSum as number) >= 17 ? 'stick' : 'hit'), p: 1 }];
const alwaysStick: DecisionRule = () => [{ action: move('stick'), p: 1 }];
const followOracle: DecisionRule = (view) => [{ action: view.oracle!().action, p: 1 }];

const near = (actual: number, expected: number, tol: number, what: string): void =>
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} is not within ${tol} of ${expected}`);

test('default rules: exact returns match the reference facts', () => {
  const optimal = solveBlackjack(DEFAULT).optimal;
  near(optimal.expectedReturn, -0.0466, 5e-4, 'optimal');
  near(optimal.expectedReturn, -0.046556, 1e-6, 'optimal (more digits)');
  near(optimal.win, 0.429, 1e-3, 'optimal win rate');
  near(optimal.win + optimal.draw + optimal.loss, 1, 1e-12, 'outcome probabilities');
  near(optimal.win - optimal.loss, optimal.expectedReturn, 1e-12, 'return = P(win) - P(loss) without 1.5 payouts');
  near(evaluateBlackjackRule(DEFAULT, randomRule).expectedReturn, -0.396, 5e-4, 'random');
  near(evaluateBlackjackRule(DEFAULT, stickAt17).expectedReturn, -0.079, 5e-4, 'stick >= 17');
  near(evaluateBlackjackRule(DEFAULT, alwaysStick).expectedReturn, -0.186, 5e-4, 'always stick');
});

test('the optimal policy is Sutton & Barto figure 5.2', () => {
  const solution = solveBlackjack(DEFAULT);
  for (let dealerCard = 1; dealerCard <= 10; dealerCard++) {
    const low = dealerCard >= 2 && dealerCard <= 6;
    for (let playerSum = 4; playerSum <= 21; playerSum++) {
      const stick = playerSum >= 17 || (playerSum >= 13 && low) || (playerSum === 12 && dealerCard >= 4 && dealerCard <= 6);
      const got = solution.optimalMove({ playerSum, usableAce: false, dealerCard, natural: false });
      assert.equal(got, stick ? 'stick' : 'hit', `hard ${playerSum} vs ${dealerCard}`);
    }
    for (let playerSum = 12; playerSum <= 21; playerSum++) {
      const stick = playerSum >= 19 || (playerSum === 18 && dealerCard >= 2 && dealerCard <= 8);
      const got = solution.optimalMove({ playerSum, usableAce: true, dealerCard, natural: false });
      assert.equal(got, stick ? 'stick' : 'hit', `soft ${playerSum} vs ${dealerCard}`);
    }
  }
});

test('natural and sab variants differ from default by exactly the natural hands', () => {
  // P(player natural) and, averaged over the dealer's up-card, P(dealer natural) and P(dealer drawn 21).
  const pNatural = 2 * (1 / 13) * (4 / 13);
  let dealerNatural = 0;
  let dealerDrawn21 = 0;
  for (let card = 1; card <= 10; card++) {
    const p = card === 10 ? 4 / 13 : 1 / 13;
    dealerNatural += p * dealerOutcomes(card).natural;
    dealerDrawn21 += p * dealerOutcomes(card).score[21];
  }
  // natural: a natural that wins (+1) pays +1.5; sab: a natural against a drawn 21 wins instead of drawing.
  const naturalBonus = 0.5 * pNatural * (1 - dealerNatural - dealerDrawn21);
  const sabBonus = pNatural * dealerDrawn21;
  for (const [name, rule] of [['optimal', followOracle], ['always stick', alwaysStick], ['stick >= 17', stickAt17]] as const) {
    const base = evaluateBlackjackRule(DEFAULT, rule).expectedReturn;
    near(evaluateBlackjackRule(NATURAL, rule).expectedReturn - base, naturalBonus, 1e-12, `${name}: natural bonus`);
    near(evaluateBlackjackRule(SAB, rule).expectedReturn - base, sabBonus, 1e-12, `${name}: sab bonus`);
  }
  // Regression figures, cross-checked by bench/blackjack-check.ts (200k episodes each).
  near(solveBlackjack(NATURAL).optimal.expectedReturn, -0.025729, 1e-6, 'natural optimal');
  near(solveBlackjack(SAB).optimal.expectedReturn, -0.043113, 1e-6, 'sab optimal');
  near(solveBlackjack(SAB).optimal.win, 0.4329, 1e-4, 'sab optimal win rate');
});

test('following the oracle scores the optimal return, and no deterministic table beats it', () => {
  for (const rules of [DEFAULT, NATURAL, SAB]) {
    near(evaluateBlackjackRule(rules, followOracle).expectedReturn, solveBlackjack(rules).optimal.expectedReturn, 1e-12, 'oracle');
  }
  const optimal = solveBlackjack(DEFAULT).optimal.expectedReturn;
  const rng = new Rng(7);
  for (let i = 0; i < 20; i++) {
    // Perturb the optimal table at random states: never better.
    const table: Record<string, BlackjackMove> = {};
    for (const d of allBlackjackDecisions()) {
      const key = blackjackStateKey({ playerSum: d.playerSum, dealerCard: d.dealerCard, usableAce: d.usableAce });
      const best = solveBlackjack(DEFAULT).optimalMove(d);
      table[key] = rng.next() < 0.1 ? (best === 'hit' ? 'stick' : 'hit') : best;
    }
    assert.ok(evaluateBlackjackRule(DEFAULT, ruleFromMoveTable(table)).expectedReturn <= optimal + 1e-12);
  }
});

test('a move table rule reproduces the policy it tabulates', () => {
  const table: Record<string, BlackjackMove> = {};
  for (const d of allBlackjackDecisions()) {
    const state = blackjackDecisionView(d, DEFAULT).state() as unknown as BlackjackState;
    table[blackjackStateKey(state)] = state.playerSum >= 17 ? 'stick' : 'hit';
  }
  assert.equal(Object.keys(table).length, 280, '28 visible states x 10 dealer cards (a natural looks like soft 21)');
  near(evaluateBlackjackRule(DEFAULT, ruleFromMoveTable(table)).expectedReturn, evaluateBlackjackRule(DEFAULT, stickAt17).expectedReturn, 1e-15, 'table');
  assert.throws(() => evaluateBlackjackRule(DEFAULT, ruleFromMoveTable({})), /no stick\/hit entry for/);
});

test('decisions and views cover every state a policy can face', () => {
  const decisions = allBlackjackDecisions();
  assert.equal(decisions.length, 10 * (18 + 10 + 1));
  const view = blackjackDecisionView({ playerSum: 16, usableAce: false, dealerCard: 10, natural: false }, DEFAULT);
  assert.deepEqual(view.state(), { playerSum: 16, dealerCard: 10, usableAce: false });
  assert.deepEqual(view.legalActions().map((a) => a.name), ['stick', 'hit']);
  const advice = view.oracle!();
  assert.equal(advice.action.name, 'hit');
  assert.ok(advice.forecasts!.hitValue > advice.forecasts!.stickValue);
  // Standing on 16 wins only when the dealer busts.
  near(advice.forecasts!.stickValue, 2 * dealerOutcomes(10).score[0] - 1, 1e-12, 'stand 16 vs 10');
});

test('policy evaluation rejects what is not a distribution over stick and hit', () => {
  assert.throws(() => evaluateBlackjackRule(DEFAULT, () => [{ action: move('stick'), p: 0.5 }]), /sum to 0.5/);
  assert.throws(() => evaluateBlackjackRule(DEFAULT, () => [{ action: { name: 'double', arguments: {} }, p: 1 }]), /'double' is not/);
  assert.throws(() => evaluateBlackjackRule(DEFAULT, () => [{ action: move('hit'), p: -1 }, { action: move('stick'), p: 2 }]), />= 0/);
});

test('the spec wires the exact values and a strict options schema', () => {
  const options = blackjackSpec.options.parse({});
  assert.deepEqual(options, { natural: false, sab: false });
  assert.equal(blackjackSpec.exact!.optimalReturn!(options), solveBlackjack(DEFAULT).optimal.expectedReturn);
  near(blackjackSpec.exact!.policyReturn!(options, stickAt17), -0.0793, 1e-4, 'policyReturn');
  assert.equal(blackjackSpec.options.safeParse({ decks: 6 }).success, false, 'unknown options are rejected');
  assert.equal(blackjackSpec.options.safeParse({ natural: 'yes' }).success, false);
  assert.match(blackjackSpec.instructions(options), /hit.*stick/s);
  assert.match(blackjackSpec.instructions({ natural: true, sab: false }), /1\.5/);
  assert.match(blackjackSpec.instructions({ natural: false, sab: true }), /natural/);
});

test('registered as a built-in env, and the scripted baselines evaluate exactly through it', () => {
  assert.ok(builtinEnvs.includes(blackjackSpec));
  checkEnvSpec(blackjackSpec, 'blackjack');
  const options = blackjackSpec.options.parse({});
  near(blackjackSpec.exact!.policyReturn!(options, stickAtPolicy(17).distribution!), -0.079, 5e-4, 'stick-at-17 policy');
  near(blackjackSpec.exact!.policyReturn!(options, randomPolicy().distribution!), -0.396, 5e-4, 'random policy');
});

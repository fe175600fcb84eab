/**
 * Exact dynamic programming for Blackjack-v1 (infinite deck): the optimal policy and its expected
 * return, and the exact expected return of any DecisionRule. A decision is (player sum, usable
 * ace, dealer card) plus whether the hand is still the initial natural, which changes the stick
 * payoff under the `natural` and `sab` rules. Hitting strictly raises the hard total, so the
 * recursion over states terminates.
 */
import type { Action, ActionDistribution, DecisionRule, DecisionView } from '../env.ts';
import { moveAction, type BlackjackMove } from './actions.ts';
import { dealerOutcomes } from './dealer.ts';
import { addCard, CARD_PROBABILITIES, handValue, isNatural, settleScores, type BlackjackRules } from './rules.ts';

/** Expected return and outcome probabilities (a 1.5 natural counts as a win). */
export interface OutcomeValue {
  expectedReturn: number;
  win: number;
  draw: number;
  loss: number;
}

export interface BlackjackDecision {
  playerSum: number;
  usableAce: boolean;
  dealerCard: number;
  /** The player's first two cards are an ace and a ten-card and it has not hit. */
  natural: boolean;
}

/** The visible state, as `Env.state()` and the solver's views return it. */
export interface BlackjackState {
  playerSum: number;
  dealerCard: number;
  usableAce: boolean;
}

const ZERO: OutcomeValue = { expectedReturn: 0, win: 0, draw: 0, loss: 0 };
const BUST: OutcomeValue = { expectedReturn: -1, win: 0, draw: 0, loss: 1 };

function addScaled(acc: OutcomeValue, p: number, v: OutcomeValue): OutcomeValue {
  return {
    expectedReturn: acc.expectedReturn + p * v.expectedReturn,
    win: acc.win + p * v.win,
    draw: acc.draw + p * v.draw,
    loss: acc.loss + p * v.loss,
  };
}

function rewardValue(reward: number): OutcomeValue {
  return { expectedReturn: reward, win: reward > 0 ? 1 : 0, draw: reward === 0 ? 1 : 0, loss: reward < 0 ? 1 : 0 };
}

function checkDecision(d: BlackjackDecision): void {
  const minSum = d.usableAce ? 12 : 4;
  if (!Number.isInteger(d.playerSum) || d.playerSum < minSum || d.playerSum > 21) {
    throw new RangeError(`blackjack decision: playerSum must be an integer ${minSum}..21, got ${d.playerSum}`);
  }
  if (!Number.isInteger(d.dealerCard) || d.dealerCard < 1 || d.dealerCard > 10) {
    throw new RangeError(`blackjack decision: dealerCard must be an integer 1..10, got ${d.dealerCard}`);
  }
  if (d.natural && !(d.playerSum === 21 && d.usableAce)) {
    throw new RangeError('blackjack decision: a natural is a soft 21');
  }
}

/** Value of sticking now: the dealer plays out from its showing card. */
export function stickValue(d: BlackjackDecision, rules: BlackjackRules): OutcomeValue {
  const dealer = dealerOutcomes(d.dealerCard);
  const player = { score: d.playerSum, natural: d.natural };
  let acc = addScaled(ZERO, dealer.natural, rewardValue(settleScores(player, { score: 21, natural: true }, rules)));
  for (let s = 0; s <= 21; s++) {
    if (dealer.score[s] === 0) continue;
    acc = addScaled(acc, dealer.score[s], rewardValue(settleScores(player, { score: s, natural: false }, rules)));
  }
  return acc;
}

/** How a solve picks the value of a decision from the values of its two actions. */
type Choose = (d: BlackjackDecision, stick: OutcomeValue, hit: OutcomeValue) => OutcomeValue;

/** Memoised values of every decision under one way of choosing, and the expected return from the deal. */
class DecisionValues {
  private readonly memo = new Map<string, OutcomeValue>();

  constructor(
    private readonly rules: BlackjackRules,
    private readonly choose: Choose,
  ) {}

  value(d: BlackjackDecision): OutcomeValue {
    const key = `${d.playerSum}|${d.usableAce}|${d.dealerCard}|${d.natural}`;
    const cached = this.memo.get(key);
    if (cached) return cached;
    const { stick, hit } = this.actionValues(d);
    const v = this.choose(d, stick, hit);
    this.memo.set(key, v);
    return v;
  }

  actionValues(d: BlackjackDecision): { stick: OutcomeValue; hit: OutcomeValue } {
    checkDecision(d);
    let hit = ZERO;
    for (const { card, p } of CARD_PROBABILITIES) {
      const next = addCard({ sum: d.playerSum, usableAce: d.usableAce }, card);
      const v =
        next.sum > 21
          ? BUST
          : this.value({ playerSum: next.sum, usableAce: next.usableAce, dealerCard: d.dealerCard, natural: false });
      hit = addScaled(hit, p, v);
    }
    return { stick: stickValue(d, this.rules), hit };
  }

  /** Expected value over the initial deal (dealer's showing card and the player's two cards). */
  fromDeal(): OutcomeValue {
    let acc = ZERO;
    for (const { card: dealerCard, p: pd } of CARD_PROBABILITIES) {
      for (const { card: a, p: pa } of CARD_PROBABILITIES) {
        for (const { card: b, p: pb } of CARD_PROBABILITIES) {
          const hand = handValue([a, b]);
          const d = { playerSum: hand.sum, usableAce: hand.usableAce, dealerCard, natural: isNatural([a, b]) };
          acc = addScaled(acc, pd * pa * pb, this.value(d));
        }
      }
    }
    return acc;
  }
}

export interface BlackjackSolution {
  rules: BlackjackRules;
  /** The optimal policy's expected return and outcome probabilities from the deal. */
  optimal: OutcomeValue;
  /** Values of sticking and of hitting (then playing optimally) at a decision. */
  actionValues(d: BlackjackDecision): { stick: OutcomeValue; hit: OutcomeValue };
  /** The optimal move (stick on ties). */
  optimalMove(d: BlackjackDecision): BlackjackMove;
}

const chooseOptimal: Choose = (_d, stick, hit) => (hit.expectedReturn > stick.expectedReturn ? hit : stick);

const solutions = new Map<string, BlackjackSolution>();

/** The optimal solution under these rules (solved once per rule variant). */
export function solveBlackjack(rules: BlackjackRules): BlackjackSolution {
  const key = `${rules.natural}|${rules.sab}`;
  const cached = solutions.get(key);
  if (cached) return cached;
  const values = new DecisionValues(rules, chooseOptimal);
  const solution: BlackjackSolution = {
    rules: { natural: rules.natural, sab: rules.sab },
    optimal: values.fromDeal(),
    actionValues: (d) => values.actionValues(d),
    optimalMove: (d) => {
      const { stick, hit } = values.actionValues(d);
      return hit.expectedReturn > stick.expectedReturn ? 'hit' : 'stick';
    },
  };
  solutions.set(key, solution);
  return solution;
}

/** A solver's view of one decision: what a DecisionRule sees (the same state as the live env's). */
export function blackjackDecisionView(d: BlackjackDecision, rules: BlackjackRules): DecisionView {
  return {
    legalActions: () => [moveAction('stick'), moveAction('hit')],
    state: (): Record<string, unknown> & BlackjackState => ({
      playerSum: d.playerSum,
      dealerCard: d.dealerCard,
      usableAce: d.usableAce,
    }),
    oracle: () => {
      const solution = solveBlackjack(rules);
      const { stick, hit } = solution.actionValues(d);
      return {
        action: moveAction(solution.optimalMove(d)),
        forecasts: { stickValue: stick.expectedReturn, hitValue: hit.expectedReturn },
      };
    },
  };
}

/** P(stick) and P(hit) from a rule's answer, rejecting anything that is not a distribution over them. */
function moveProbabilities(dist: ActionDistribution, d: BlackjackDecision): { stick: number; hit: number } {
  const where = `decision rule at player ${d.playerSum}${d.usableAce ? ' (soft)' : ''} vs dealer ${d.dealerCard}`;
  let stick = 0;
  let hit = 0;
  for (const { action, p } of dist) {
    if (!Number.isFinite(p) || p < 0) throw new RangeError(`${where}: probability ${p} is not a finite number >= 0`);
    if (action.name === 'stick') stick += p;
    else if (action.name === 'hit') hit += p;
    else throw new RangeError(`${where}: '${action.name}' is not a blackjack action (stick or hit)`);
  }
  if (Math.abs(stick + hit - 1) > 1e-6) throw new RangeError(`${where}: probabilities sum to ${stick + hit}, not 1`);
  return { stick, hit };
}

/** The exact expected return and outcome probabilities of a DecisionRule from the deal. */
export function evaluateBlackjackRule(rules: BlackjackRules, rule: DecisionRule): OutcomeValue {
  const choose: Choose = (d, stickV, hitV) => {
    const { stick, hit } = moveProbabilities(rule(blackjackDecisionView(d, rules)), d);
    return addScaled(addScaled(ZERO, stick, stickV), hit, hitV);
  };
  return new DecisionValues(rules, choose).fromDeal();
}

/** Every decision a policy can face (natural hands included), e.g. to tabulate a policy's greedy moves. */
export function allBlackjackDecisions(): BlackjackDecision[] {
  const out: BlackjackDecision[] = [];
  for (let dealerCard = 1; dealerCard <= 10; dealerCard++) {
    for (let playerSum = 4; playerSum <= 21; playerSum++) {
      out.push({ playerSum, usableAce: false, dealerCard, natural: false });
    }
    for (let playerSum = 12; playerSum <= 21; playerSum++) {
      out.push({ playerSum, usableAce: true, dealerCard, natural: false });
    }
    out.push({ playerSum: 21, usableAce: true, dealerCard, natural: true });
  }
  return out;
}

/** A table key for a visible state: `16/9/hard`, `18/1/soft`. */
export function blackjackStateKey(state: BlackjackState): string {
  return `${state.playerSum}/${state.dealerCard}/${state.usableAce ? 'soft' : 'hard'}`;
}

/** A deterministic rule from a table of moves by state key (e.g. a policy's greedy choices); a missing key is an error. */
export function ruleFromMoveTable(table: Readonly<Record<string, BlackjackMove>>): DecisionRule {
  return (view) => {
    const key = blackjackStateKey(view.state() as unknown as BlackjackState);
    const move = table[key];
    if (move !== 'stick' && move !== 'hit') throw new RangeError(`move table has no stick/hit entry for ${key}`);
    const action: Action = moveAction(move);
    return [{ action, p: 1 }];
  };
}

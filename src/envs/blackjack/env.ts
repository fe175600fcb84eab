/**
 * Blackjack-v1 for an LLM: the same dynamics as Gymnasium, with the player's and the dealer's
 * cards drawn from separate seeded streams so a seed deals the same cards whatever is played.
 */
import { Rng } from '../../core/random.ts';
import type { Action, Env, EnvReset, EnvStep, InvalidActionRule, OracleAdvice } from '../env.ts';
import { BLACKJACK_TOOLS, blackjackActionError, moveAction } from './actions.ts';
import { solveBlackjack, type BlackjackState } from './solver.ts';
import {
  cardName,
  dealerDraws,
  drawCard,
  handValue,
  isNatural,
  outcomeOf,
  settle,
  type BlackjackRules,
} from './rules.ts';

/** Rng streams under the episode seed. */
const PLAYER_STREAM = 1;
const DEALER_STREAM = 2;

function describeHand(cards: readonly number[]): string {
  const { sum, usableAce } = handValue(cards);
  const detail = sum > 21 ? 'bust' : usableAce ? 'usable ace' : 'no usable ace';
  return `${cards.map(cardName).join(', ')} (sum ${sum}, ${detail})`;
}

function formatReward(reward: number): string {
  return reward > 0 ? `+${reward}` : String(reward);
}

export class BlackjackEnv implements Env {
  readonly kind = 'outcome' as const;
  readonly invalidAction: InvalidActionRule = { mode: 'end', penalty: -1, maxRetries: 0 };
  /** Even all aces bust a hand within 21 hits. */
  readonly maxTurns = 21;

  private playerRng: Rng | null = null;
  private dealerRng: Rng | null = null;
  private player: number[] = [];
  private dealer: number[] = [];
  private done = true;

  constructor(private readonly rules: BlackjackRules) {}

  reset(seed: number): EnvReset {
    this.playerRng = new Rng(seed, PLAYER_STREAM);
    this.dealerRng = new Rng(seed, DEALER_STREAM);
    this.dealer = [drawCard(this.dealerRng), drawCard(this.dealerRng)];
    this.player = [drawCard(this.playerRng), drawCard(this.playerRng)];
    this.done = false;
    return { observation: this.describeTable(), tools: BLACKJACK_TOOLS, info: { playerCards: [...this.player] } };
  }

  validate(action: Action): string | null {
    if (this.done) return 'the hand is over';
    return blackjackActionError(action);
  }

  step(action: Action): EnvStep {
    const error = this.validate(action);
    if (error) throw new Error(`blackjack step: ${error}`);
    return action.name === 'hit' ? this.hit() : this.stick();
  }

  legalActions(): Action[] {
    return this.done ? [] : [moveAction('stick'), moveAction('hit')];
  }

  state(): Record<string, unknown> & BlackjackState {
    this.requireDealt();
    const { sum, usableAce } = handValue(this.player);
    return { playerSum: sum, dealerCard: this.dealer[0], usableAce };
  }

  oracle(): OracleAdvice {
    this.requireDealt();
    const solution = solveBlackjack(this.rules);
    const d = { ...this.decisionState(), natural: isNatural(this.player) };
    const { stick, hit } = solution.actionValues(d);
    return {
      action: moveAction(solution.optimalMove(d)),
      forecasts: { stickValue: stick.expectedReturn, hitValue: hit.expectedReturn },
    };
  }

  private decisionState(): { playerSum: number; usableAce: boolean; dealerCard: number } {
    const { playerSum, usableAce, dealerCard } = this.state();
    return { playerSum, usableAce, dealerCard };
  }

  private hit(): EnvStep {
    const card = drawCard(this.playerRng!);
    this.player.push(card);
    if (handValue(this.player).sum > 21) {
      this.done = true;
      return this.finish(`You drew ${cardName(card)}. Your hand: ${describeHand(this.player)}.`, -1);
    }
    return {
      observation: `You drew ${cardName(card)}. ${this.describeTable()}`,
      reward: 0,
      rewardParts: { outcome: 0 },
      done: false,
      truncated: false,
    };
  }

  private stick(): EnvStep {
    while (dealerDraws(this.dealer)) this.dealer.push(drawCard(this.dealerRng!));
    this.done = true;
    const reward = settle(this.player, this.dealer, this.rules);
    const natural = reward > 1 ? ' with a natural' : '';
    return this.finish(`You stick on ${handValue(this.player).sum}. Dealer's hand: ${describeHand(this.dealer)}.`, reward, natural);
  }

  private finish(text: string, reward: number, how = ''): EnvStep {
    const outcome = outcomeOf(reward);
    const verdict = outcome === 'draw' ? 'Draw (0).' : `You ${outcome === 'win' ? 'win' : 'lose'}${how} (${formatReward(reward)}).`;
    return {
      observation: `${text} ${verdict}`,
      reward,
      rewardParts: { outcome: reward },
      done: true,
      truncated: false,
      info: { outcome, playerCards: [...this.player], dealerCards: [...this.dealer] },
    };
  }

  private describeTable(): string {
    return `Your hand: ${describeHand(this.player)}. Dealer shows: ${cardName(this.dealer[0])}.`;
  }

  private requireDealt(): void {
    if (this.player.length === 0) throw new Error('blackjack: call reset(seed) first');
  }
}

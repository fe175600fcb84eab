/**
 * A k-armed Bernoulli bandit. Arm probabilities come from the seed; each pull's payout compares
 * the arm's probability with that pull's uniform draw, so a seed fixes the luck of every pull
 * whatever arm is chosen (common random numbers across the samples of a group).
 */
import { Rng } from '../../core/random.ts';
import type { ToolSpec } from '../../core/messages.ts';
import type { Action, ActionValue, Env, EnvReset, EnvStep, InvalidActionRule, OracleAdvice } from '../env.ts';
import { banditTools, parsePull, pullAction } from './actions.ts';
import { bayesBandit } from './bayes.ts';
import type { BanditOptions } from './options.ts';

/** Rng streams under the episode seed. */
const ARMS_STREAM = 1;
const PAYOUT_STREAM = 2;

/** The index of the (first) most likely arm. */
export function bestArm(probabilities: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < probabilities.length; i++) if (probabilities[i] > probabilities[best]) best = i;
  return best;
}

/** The arm probabilities a seed draws for k arms. */
export function armProbabilities(seed: number, k: number): number[] {
  const rng = new Rng(seed, ARMS_STREAM);
  return Array.from({ length: k }, () => rng.next());
}

export class BanditEnv implements Env {
  readonly kind = 'dense' as const;
  /** Any legal pull earns >= 0, so an illegal one must cost more than the best pull. */
  readonly invalidAction: InvalidActionRule = { mode: 'retry', penalty: -1, maxRetries: 2 };
  readonly maxTurns: number;

  private probabilities: number[] = [];
  private payoutRng: Rng | null = null;
  private pulls: number[] = [];
  private successes: number[] = [];
  private pulled = 0;
  /** Sum of the true probabilities of the arms pulled: the episode's expected return. */
  private expectedReturn = 0;
  private readonly tools: ToolSpec[];

  constructor(private readonly options: BanditOptions) {
    this.maxTurns = options.horizon;
    this.tools = banditTools(options.k);
  }

  reset(seed: number): EnvReset {
    const { k } = this.options;
    this.probabilities = armProbabilities(seed, k);
    this.payoutRng = new Rng(seed, PAYOUT_STREAM);
    this.pulls = new Array<number>(k).fill(0);
    this.successes = new Array<number>(k).fill(0);
    this.pulled = 0;
    this.expectedReturn = 0;
    return { observation: this.describe(), tools: this.tools };
  }

  validate(action: Action): string | null {
    if (this.isDone()) return 'no pulls left';
    const parsed = parsePull(this.options.k, action);
    return 'error' in parsed ? parsed.error : null;
  }

  step(action: Action): EnvStep {
    const error = this.validate(action);
    if (error) throw new Error(`bandit step: ${error}`);
    const { arm } = parsePull(this.options.k, action) as { arm: number };
    const reward = this.payoutRng!.next() < this.probabilities[arm] ? 1 : 0;
    this.pulls[arm]++;
    this.successes[arm] += reward;
    this.pulled++;
    this.expectedReturn += this.probabilities[arm];
    const result = `Arm ${arm + 1} paid ${reward}.`;
    if (!this.isDone()) {
      return { observation: `${result} ${this.describe()}`, reward, rewardParts: { payout: reward }, done: false, truncated: false };
    }
    const total = this.successes.reduce((a, b) => a + b, 0);
    const best = bestArm(this.probabilities);
    const oracleReturn = this.options.horizon * this.probabilities[best];
    const regret = oracleReturn - this.expectedReturn;
    return {
      observation: `${result} No pulls left: you won ${total} in ${this.options.horizon} pulls.`,
      reward,
      rewardParts: { payout: reward },
      done: true,
      truncated: false,
      info: {
        regret,
        oracleReturn,
        expectedReturn: this.expectedReturn,
        bestArm: best + 1,
        armProbabilities: [...this.probabilities],
        metrics: { regret },
      },
    };
  }

  legalActions(): Action[] {
    return this.isDone() ? [] : this.probabilities.map((_, arm) => pullAction(arm));
  }

  state(): Record<string, unknown> {
    return { pullsLeft: this.options.horizon - this.pulled, pulls: [...this.pulls], successes: [...this.successes] };
  }

  /** The Bayes-optimal pull (bayes.ts): the best play from what the pulls so far showed, not from the hidden probabilities. */
  oracle(): OracleAdvice {
    this.requireReset();
    const counts = this.pulls.map((n, arm): [number, number] => [this.successes[arm], n - this.successes[arm]]);
    return { action: pullAction(bayesBandit(this.options.k, this.options.horizon).bestArm(counts)) };
  }

  /**
   * A pull's exact expected reward given what the pulls so far showed: its arm's posterior mean
   * (s + 1) / (n + 2) under the uniform prior the probabilities are drawn from (bayes.ts). It has the
   * same expectation as the arm's hidden probability, so the dense estimator's optimum is unchanged
   * (greedy in the posterior mean), but none of the hidden probability's noise: scored by the hidden
   * probability, a group's answers at a decision were ranked by arm probabilities the answers could
   * not see, which RL had to average out over many decisions.
   */
  actionRewards(): ActionValue[] {
    this.requireReset();
    return this.pulls.map((n, arm) => ({ action: pullAction(arm), expectedReward: (this.successes[arm] + 1) / (n + 2) }));
  }

  private isDone(): boolean {
    return this.probabilities.length === 0 || this.pulled >= this.options.horizon;
  }

  private describe(): string {
    const arms = this.pulls.map((n, i) =>
      n === 0 ? `arm ${i + 1}: never pulled` : `arm ${i + 1}: ${this.successes[i]} of ${n} pulls paid`,
    );
    const left = this.options.horizon - this.pulled;
    return `${left} pull${left === 1 ? '' : 's'} left. ${arms.join('; ')}.`;
  }

  private requireReset(): void {
    if (this.probabilities.length === 0) throw new Error('bandit: call reset(seed) first');
  }
}

/**
 * kelly: repeated bets at known net odds b and win probability p on a bankroll. Each step the agent
 * stakes a fraction f of its bankroll and earns the log growth ln(W'/W), so the Kelly fraction
 * f* = p − (1 − p)/b maximises the expected reward of every step.
 */
import type { ToolSpec } from '../../core/messages.ts';
import { Rng } from '../../core/random.ts';
import type { Action, ActionValue, Env, EnvReset, EnvStep, InvalidActionRule, OracleAdvice, ReportQuestion } from '../env.ts';
import { reportProperties, reportTargets } from '../report-arguments.ts';
import { bestGridFraction, expectedLogGrowth, fractionGrid, kellyFraction } from './growth.ts';
import { stepValues, type KellyOptions } from './options.ts';
import { describeGrid, renderKelly, type LastBet } from './render.ts';

/** Independent random streams: the episode's parameters never shift the bets' outcomes. */
const PARAM_STREAM = 0;
const OUTCOME_STREAM = 1;

export const BET_TOOL = 'bet';
/** The report question (report option): the probability that the next bet wins. */
export const WIN_QUESTION = 'p_win';

export class KellyEnv implements Env {
  readonly kind = 'dense' as const;
  readonly invalidAction: InvalidActionRule;
  readonly maxTurns: number;
  private readonly grid: number[];
  private p = 0;
  private b = 0;
  private bankroll = 0;
  private turn = 0;
  private logGrowth = 0;
  private last: LastBet | null = null;
  private outcomes: Rng | null = null;

  constructor(private readonly options: KellyOptions) {
    this.grid = fractionGrid(options.fractionStep, options.maxFraction);
    this.maxTurns = options.horizon;
    this.invalidAction = { mode: 'retry', penalty: options.invalidPenalty, maxRetries: options.maxRetries };
  }

  reset(seed: number): EnvReset {
    const params = new Rng(seed, PARAM_STREAM);
    const ps = stepValues(this.options.winProbRange, 0.01);
    const bs = stepValues(this.options.oddsRange, 0.1);
    this.p = ps[params.int(ps.length)];
    this.b = bs[params.int(bs.length)];
    this.outcomes = new Rng(seed, OUTCOME_STREAM);
    this.bankroll = this.options.bankroll;
    this.turn = 0;
    this.logGrowth = 0;
    this.last = null;
    return { observation: this.render(), tools: [this.betTool()], info: { p: this.p, b: this.b } };
  }

  step(action: Action): EnvStep {
    const outcomes = this.requireStarted();
    const problem = this.validate(action);
    if (problem) throw new Error(`kelly: step called with an illegal action: ${problem}`);
    const f = action.arguments.fraction as number;
    const questions = this.reportQuestions();
    const targets = questions.length > 0 ? reportTargets(questions, this.oracle()) : null;
    // One draw per bet whatever the stake, so every policy faces the same sequence of wins and losses.
    const won = outcomes.next() < this.p;
    const before = this.bankroll;
    const growth = won ? Math.log1p(this.b * f) : Math.log1p(-f);
    this.bankroll = before * Math.exp(growth);
    this.logGrowth += growth;
    this.turn += 1;
    this.last = { fraction: f, won, before, after: this.bankroll };
    const done = this.turn >= this.options.horizon;
    const info: Record<string, unknown> = { won, bankroll: this.bankroll, logGrowth: this.logGrowth };
    if (targets) info.report = { questions, targets, outcomes: { [WIN_QUESTION]: won ? 1 : 0 } };
    if (done) info.oracleReturn = this.options.horizon * this.bestGrowth();
    return { observation: this.render(), reward: growth, done, truncated: false, info };
  }

  validate(action: Action): string | null {
    if (action.name !== BET_TOOL) return `unknown action '${action.name}'; call ${BET_TOOL} with a fraction`;
    const answers = this.options.report ? [WIN_QUESTION] : [];
    const extra = Object.keys(action.arguments).filter((k) => k !== 'fraction' && !answers.includes(k));
    if (extra.length > 0) return `${BET_TOOL} takes only 'fraction' (got ${extra.join(', ')})`;
    const f = action.arguments.fraction;
    if (typeof f !== 'number' || !Number.isFinite(f)) return `fraction must be a number, one of ${describeGrid(this.grid)}`;
    // Exact membership: the dense group looks the action up by value among the legal ones.
    if (!this.grid.includes(f)) return `fraction must be one of ${describeGrid(this.grid)} (got ${f})`;
    return null;
  }

  legalActions(): Action[] {
    return this.grid.map((fraction) => ({ name: BET_TOOL, arguments: { fraction } }));
  }

  /** Exact expected log growth of every legal stake. */
  actionRewards(): ActionValue[] {
    this.requireStarted();
    return this.legalActions().map((action) => ({
      action,
      expectedReward: expectedLogGrowth(this.p, this.b, action.arguments.fraction as number),
    }));
  }

  /** The legal stake nearest in growth to Kelly's f*, with f* itself as a forecast. */
  oracle(): OracleAdvice {
    this.requireStarted();
    const fraction = bestGridFraction(this.p, this.b, this.grid);
    return {
      action: { name: BET_TOOL, arguments: { fraction } },
      forecasts: { kelly_fraction: kellyFraction(this.p, this.b), expected_log_growth: this.bestGrowth(), [WIN_QUESTION]: this.p },
    };
  }

  /** With the report option: the probability that the next bet wins (the oracle's target is p). */
  reportQuestions(): ReportQuestion[] {
    if (!this.options.report) return [];
    return [{ name: WIN_QUESTION, kind: 'probability', text: 'the probability that this bet wins' }];
  }

  state(): Record<string, unknown> {
    return {
      turn: this.turn,
      horizon: this.options.horizon,
      p: this.p,
      b: this.b,
      bankroll: this.bankroll,
      logGrowth: this.logGrowth,
    };
  }

  private bestGrowth(): number {
    return expectedLogGrowth(this.p, this.b, bestGridFraction(this.p, this.b, this.grid));
  }

  private betTool(): ToolSpec {
    return {
      name: BET_TOOL,
      description: 'Stake a fraction of your current bankroll on the next bet.',
      parameters: {
        type: 'object',
        properties: {
          fraction: { type: 'number', enum: this.grid, description: 'fraction of the bankroll to stake' },
          ...reportProperties(this.reportQuestions()),
        },
        required: ['fraction'],
        additionalProperties: false,
      },
    };
  }

  private render(): string {
    return renderKelly({
      turn: this.turn,
      horizon: this.options.horizon,
      bankroll: this.bankroll,
      p: this.p,
      b: this.b,
      grid: this.grid,
      last: this.last,
      logGrowth: this.logGrowth,
    });
  }

  private requireStarted(): Rng {
    if (!this.outcomes) throw new Error('kelly: call reset(seed) before using the env');
    if (this.turn >= this.options.horizon) throw new Error('kelly: the episode is over; call reset(seed)');
    return this.outcomes;
  }
}

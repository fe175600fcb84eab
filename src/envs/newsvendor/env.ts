/**
 * newsvendor: each day the agent orders a perishable stock against a known demand distribution.
 * Reward = the day's profit; the critical fractile Q* = F⁻¹(c_u / (c_u + c_o)) maximises its expectation.
 */
import type { ToolSpec } from '../../core/messages.ts';
import { Rng } from '../../core/random.ts';
import type { Action, ActionValue, Env, EnvReset, EnvStep, InvalidActionRule, OracleAdvice, ReportQuestion } from '../env.ts';
import { reportProperties, reportTargets } from '../report-arguments.ts';
import { sampleDemand, type DemandDistribution } from './demand.ts';
import { wholeNumbers, type NewsvendorOptions } from './options.ts';
import { criticalFractile, criticalRatio, expectedProfits, profit, type UnitEconomics } from './profit.ts';
import { renderNewsvendor, type DayResult } from './render.ts';

/** Independent random streams: the episode's parameters never shift the days' demands. */
const PARAM_STREAM = 0;
const DEMAND_STREAM = 1;

export const ORDER_TOOL = 'order';
/** The report question (report option): today's demand quantile at the critical ratio. */
export const DEMAND_QUESTION = 'demand_quantile';

/** The episode's setting: unit economics and every day's demand distribution, drawn at reset. */
export interface NewsvendorEpisode {
  economics: UnitEconomics;
  days: DemandDistribution[];
}

export function drawEpisode(o: NewsvendorOptions, rng: Rng): NewsvendorEpisode {
  const pick = (values: number[]) => values[rng.int(values.length)];
  const economics = { price: pick(wholeNumbers(o.priceRange)), cost: pick(wholeNumbers(o.costRange)), salvage: pick(wholeNumbers(o.salvageRange)) };
  const means = wholeNumbers(o.meanRange);
  const days = Array.from({ length: o.horizon }, (): DemandDistribution => {
    const mean = pick(means);
    return o.demand === 'poisson' ? { kind: 'poisson', mean } : { kind: 'uniform', low: mean - o.uniformSpread, high: mean + o.uniformSpread };
  });
  return { economics, days };
}

/** The best expected profit of one day (at the critical fractile). */
export function bestExpectedProfit(economics: UnitEconomics, dist: DemandDistribution, maxOrder: number): number {
  return expectedProfits(economics, dist, maxOrder)[criticalFractile(economics, dist, maxOrder)];
}

export class NewsvendorEnv implements Env {
  readonly kind = 'dense' as const;
  readonly invalidAction: InvalidActionRule;
  readonly maxTurns: number;
  private episode: NewsvendorEpisode | null = null;
  private demands: Rng | null = null;
  private day = 0;
  private totalProfit = 0;
  private last: DayResult | null = null;

  constructor(private readonly options: NewsvendorOptions) {
    this.maxTurns = options.horizon;
    this.invalidAction = { mode: 'retry', penalty: options.invalidPenalty, maxRetries: options.maxRetries };
  }

  reset(seed: number): EnvReset {
    this.episode = drawEpisode(this.options, new Rng(seed, PARAM_STREAM));
    this.demands = new Rng(seed, DEMAND_STREAM);
    this.day = 0;
    this.totalProfit = 0;
    this.last = null;
    return { observation: this.render(), tools: [this.orderTool()], info: { ...this.episode.economics } };
  }

  step(action: Action): EnvStep {
    const { episode, dist, demands } = this.requireDay();
    const problem = this.validate(action);
    if (problem) throw new Error(`newsvendor: step called with an illegal action: ${problem}`);
    const ordered = action.arguments.quantity as number;
    const questions = this.reportQuestions();
    const targets = questions.length > 0 ? reportTargets(questions, this.oracle()) : null;
    // One draw per day whatever the order, so every policy faces the same demands.
    const demand = sampleDemand(dist, demands.next());
    const reward = profit(episode.economics, ordered, demand);
    this.totalProfit += reward;
    this.day += 1;
    this.last = { ordered, demand, profit: reward };
    const done = this.day >= this.options.horizon;
    const info: Record<string, unknown> = { demand, totalProfit: this.totalProfit };
    if (targets) info.report = { questions, targets, outcomes: { [DEMAND_QUESTION]: demand } };
    if (done) info.oracleReturn = this.oracleReturn(episode);
    return { observation: this.render(), reward, done, truncated: false, info };
  }

  validate(action: Action): string | null {
    if (action.name !== ORDER_TOOL) return `unknown action '${action.name}'; call ${ORDER_TOOL} with a quantity`;
    const answers = this.options.report ? [DEMAND_QUESTION] : [];
    const extra = Object.keys(action.arguments).filter((k) => k !== 'quantity' && !answers.includes(k));
    if (extra.length > 0) return `${ORDER_TOOL} takes only 'quantity' (got ${extra.join(', ')})`;
    const q = action.arguments.quantity;
    if (typeof q !== 'number' || !Number.isInteger(q)) return `quantity must be a whole number from 0 to ${this.options.maxOrder}`;
    if (q < 0 || q > this.options.maxOrder) return `quantity must be from 0 to ${this.options.maxOrder} (got ${q})`;
    return null;
  }

  legalActions(): Action[] {
    return Array.from({ length: this.options.maxOrder + 1 }, (_, quantity) => ({ name: ORDER_TOOL, arguments: { quantity } }));
  }

  /** Exact expected profit of every legal order today. */
  actionRewards(): ActionValue[] {
    const { episode, dist } = this.requireDay();
    const values = expectedProfits(episode.economics, dist, this.options.maxOrder);
    return this.legalActions().map((action, q) => ({ action, expectedReward: values[q] }));
  }

  /** Orders the critical fractile. */
  oracle(): OracleAdvice {
    const { episode, dist } = this.requireDay();
    const quantity = criticalFractile(episode.economics, dist, this.options.maxOrder);
    return {
      action: { name: ORDER_TOOL, arguments: { quantity } },
      forecasts: {
        critical_ratio: criticalRatio(episode.economics),
        expected_profit: expectedProfits(episode.economics, dist, this.options.maxOrder)[quantity],
        // The critical fractile is F⁻¹(critical ratio) (capped at maxOrder): the demand quantile asked.
        [DEMAND_QUESTION]: quantity,
      },
    };
  }

  /**
   * With the report option: the demand quantile at the critical ratio (its level), in 0..maxOrder;
   * the oracle's target is the critical fractile. Asked only while the episode has a day to play.
   */
  reportQuestions(): ReportQuestion[] {
    if (!this.options.report || !this.episode) return [];
    return [
      {
        name: DEMAND_QUESTION,
        kind: 'quantile',
        level: criticalRatio(this.episode.economics),
        range: [0, this.options.maxOrder],
        text: "the demand level that today's demand stays at or below with probability equal to the critical ratio (price − cost) / (price − salvage)",
      },
    ];
  }

  state(): Record<string, unknown> {
    return {
      day: this.day,
      horizon: this.options.horizon,
      ...this.episode?.economics,
      demand: this.episode?.days[this.day] ?? null,
      totalProfit: this.totalProfit,
    };
  }

  /** What the critical-fractile policy expects to earn over this episode's days. */
  private oracleReturn(episode: NewsvendorEpisode): number {
    return episode.days.reduce((sum, dist) => sum + bestExpectedProfit(episode.economics, dist, this.options.maxOrder), 0);
  }

  private orderTool(): ToolSpec {
    return {
      name: ORDER_TOOL,
      description: "Order stock for today's sales.",
      parameters: {
        type: 'object',
        properties: {
          quantity: { type: 'integer', minimum: 0, maximum: this.options.maxOrder, description: 'units to order' },
          ...reportProperties(this.reportQuestions()),
        },
        required: ['quantity'],
        additionalProperties: false,
      },
    };
  }

  private render(): string {
    return renderNewsvendor({
      day: this.day,
      horizon: this.options.horizon,
      economics: this.episode!.economics,
      demand: this.episode!.days[this.day] ?? null,
      maxOrder: this.options.maxOrder,
      last: this.last,
      totalProfit: this.totalProfit,
    });
  }

  private requireDay(): { episode: NewsvendorEpisode; dist: DemandDistribution; demands: Rng } {
    if (!this.episode || !this.demands) throw new Error('newsvendor: call reset(seed) before using the env');
    if (this.day >= this.options.horizon) throw new Error('newsvendor: the episode is over; call reset(seed)');
    return { episode: this.episode, dist: this.episode.days[this.day], demands: this.demands };
  }
}

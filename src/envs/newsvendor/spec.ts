/** The newsvendor env's registration: options, factory, instructions and exact optimal return. */
import type { EnvSpec } from '../env.ts';
import { newsvendorTrainPreset } from '../train-presets.ts';
import type { DemandDistribution } from './demand.ts';
import { bestExpectedProfit, NewsvendorEnv } from './env.ts';
import { newsvendorOptionsSchema, wholeNumbers, type NewsvendorOptions } from './options.ts';
import { reportRewards } from '../report-options.ts';
import { newsvendorBaselines } from './baselines.ts';

const MAX_COMBINATIONS = 1_000_000;

/**
 * The oracle's expected return before anything is drawn: horizon × the mean, over the uniform draws of
 * price, cost, salvage and the day's mean demand, of the best expected daily profit (exact: draws are discrete).
 */
export function newsvendorOptimalReturn(o: NewsvendorOptions): number {
  const combos = [o.priceRange, o.costRange, o.salvageRange, o.meanRange].reduce((n, r) => n * (r[1] - r[0] + 1), 1);
  if (combos > MAX_COMBINATIONS) {
    throw new Error(`newsvendor: exact optimal return would enumerate ${combos} parameter combinations (limit ${MAX_COMBINATIONS}); narrow the ranges`);
  }
  let sum = 0;
  let count = 0;
  for (const price of wholeNumbers(o.priceRange)) {
    for (const cost of wholeNumbers(o.costRange)) {
      for (const salvage of wholeNumbers(o.salvageRange)) {
        for (const mean of wholeNumbers(o.meanRange)) {
          const dist: DemandDistribution =
            o.demand === 'poisson' ? { kind: 'poisson', mean } : { kind: 'uniform', low: mean - o.uniformSpread, high: mean + o.uniformSpread };
          sum += bestExpectedProfit({ price, cost, salvage }, dist, o.maxOrder);
          count++;
        }
      }
    }
  }
  return (o.horizon * sum) / count;
}

export const newsvendorSpec: EnvSpec<NewsvendorOptions> = {
  name: 'newsvendor',
  description: 'Order perishable stock against a known demand distribution; reward = profit (dense; oracle: critical fractile)',
  kind: 'dense',
  options: newsvendorOptionsSchema,
  create: (options) => new NewsvendorEnv(options),
  instructions: (o) =>
    [
      `You run a stall for ${o.horizon} days selling a perishable item. Each morning you see the price, the unit cost, the salvage value of unsold units and the day's demand distribution.`,
      'Call `order` with how many units to stock. You sell the smaller of your stock and the demand; leftovers are salvaged at the end of the day.',
      "Your reward each day is that day's profit: sales revenue plus salvage minus the cost of the units ordered. Maximise its expected value.",
      ...(o.report
        ? ['In the same call, give `demand_quantile`: the demand level that today\'s demand stays at or below with probability (price − cost) / (price − salvage); it is scored with the pinball loss.']
        : []),
    ].join('\n'),
  rewards: reportRewards,
  exact: { optimalReturn: newsvendorOptimalReturn },
  baselines: newsvendorBaselines,
  train: newsvendorTrainPreset,
};

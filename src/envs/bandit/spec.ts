/** The `bandit` env's registration: options, factory, prompt and exact values. */
import type { EnvSpec } from '../env.ts';
import { banditTrainPreset } from '../train-presets.ts';
import { bayesOptimalReturn } from './bayes.ts';
import { BanditEnv } from './env.ts';
import { banditOptionsSchema, type BanditOptions } from './options.ts';
import { banditBaselines } from './baselines.ts';

export const banditSpec: EnvSpec<BanditOptions> = {
  name: 'bandit',
  description: 'k-armed Bernoulli bandit with arm probabilities drawn from the seed; each pull pays 0 or 1.',
  kind: 'dense',
  options: banditOptionsSchema,
  create: (options) => new BanditEnv(options),
  instructions: (options) =>
    `There are ${options.k} slot machines (arms). Each pays 1 with its own fixed, unknown probability, else 0. ` +
    `You have ${options.horizon} pulls; each turn call pull with an arm number. ` +
    'Win as much as you can: try arms to learn which pays best, then keep pulling it.',
  exact: {
    /**
     * The Bayes-optimal player's expected payout (bayes.ts; the `oracle` policy plays it): the best
     * any policy can earn without seeing the probabilities. The `regret` metric is measured against
     * a player who always pulls the best arm (horizon × max p, on average horizon × k / (k + 1)),
     * which no policy can be, so even the oracle has some.
     */
    optimalReturn: (options) => bayesOptimalReturn(options.k, options.horizon),
  },
  baselines: banditBaselines,
  train: banditTrainPreset,
};

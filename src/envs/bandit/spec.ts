/** The `bandit` env's registration: options, factory, prompt and exact values. */
import type { EnvSpec } from '../env.ts';
import { BanditEnv } from './env.ts';
import { banditOptionsSchema, type BanditOptions } from './options.ts';

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
     * The oracle (always the best arm, known to it) earns horizon * max(p); with k uniform
     * probabilities E[max p] = k / (k + 1). A learning agent's gap to it is its expected regret.
     */
    optimalReturn: (options) => (options.horizon * options.k) / (options.k + 1),
  },
};

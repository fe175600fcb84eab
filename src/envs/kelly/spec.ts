/** The kelly env's registration: options, factory, instructions and exact optimal return. */
import type { EnvSpec } from '../env.ts';
import { denseTrainPreset } from '../train-presets.ts';
import { KellyEnv } from './env.ts';
import { bestGridFraction, expectedLogGrowth, fractionGrid } from './growth.ts';
import { kellyOptionsSchema, stepValues, type KellyOptions } from './options.ts';
import { reportRewards } from '../report-options.ts';
import { kellyBaselines } from './baselines.ts';

/**
 * The oracle's expected return before the episode's p and b are drawn: horizon × the mean, over the
 * uniform draw of (p, b), of the best grid stake's expected log growth (exact: the draws are discrete).
 */
export function kellyOptimalReturn(options: KellyOptions): number {
  const grid = fractionGrid(options.fractionStep, options.maxFraction);
  const ps = stepValues(options.winProbRange, 0.01);
  const bs = stepValues(options.oddsRange, 0.1);
  let sum = 0;
  for (const p of ps) for (const b of bs) sum += expectedLogGrowth(p, b, bestGridFraction(p, b, grid));
  return (options.horizon * sum) / (ps.length * bs.length);
}

export const kellySpec: EnvSpec<KellyOptions> = {
  name: 'kelly',
  description: 'Repeated bets at known odds on a bankroll; reward = log growth (dense; oracle: Kelly fraction)',
  kind: 'dense',
  options: kellyOptionsSchema,
  create: (options) => new KellyEnv(options),
  instructions: (o) =>
    [
      `You manage a bankroll over ${o.horizon} bets. Each bet wins with the probability shown and then pays the stake times the net odds shown; a loss forfeits the stake.`,
      'Each turn call `bet` with the fraction of your current bankroll to stake (0 means skip this bet).',
      'Your reward for a bet is the log of your bankroll growth, ln(new bankroll / old bankroll). Maximise its expected value.',
      ...(o.report ? ['In the same call, give `p_win`: your probability that this bet wins; it is scored with a proper scoring rule.'] : []),
    ].join('\n'),
  rewards: reportRewards,
  exact: { optimalReturn: kellyOptimalReturn },
  baselines: kellyBaselines,
  train: denseTrainPreset,
};

/** The market env's registration: options, factory, instructions and its composite reward. */
import { formatReward } from '../../rewards/format.ts';
import { reasoningReward } from '../../rewards/reasoning.ts';
import type { EnvSpec } from '../env.ts';
import { multiTurnTrainPreset } from '../train-presets.ts';
import { MarketEnv } from './env.ts';
import { marketOptionsSchema, type MarketOptions } from './options.ts';
import { marketBaselines } from './baselines.ts';

export const marketSpec: EnvSpec<MarketOptions> = {
  name: 'market',
  description: 'Trade a few drifting assets tick by tick; reward = pnl + risk (+ format, reasoning from the text)',
  kind: 'outcome',
  options: marketOptionsSchema,
  create: (options) => new MarketEnv(options),
  instructions: (o) =>
    [
      `You trade ${o.assets} asset${o.assets > 1 ? 's' : ''} for ${o.horizon} ticks, starting with ${o.balance} in cash. Prices move randomly each tick${o.showOutlook ? ' around the expected move shown' : ''}.`,
      'Each tick take one action: `buy` or `sell` an asset (a number of shares), or `wait`. `get_price` shows recent prices and does not use up the tick.',
      `Reward each tick: pnl = your equity change in % of the starting balance, plus risk = −${o.riskAversion / 2} × the variance of that pnl, so large positions in volatile assets cost more.`,
      'Think briefly about the asset and the action you choose before calling the tool.',
    ].join('\n'),
  rewards: (o) => ({
    fns: [formatReward(), reasoningReward({ minWords: o.reasoningMinWords, maxWords: o.reasoningMaxWords })],
    weights: { pnl: o.pnlWeight, risk: o.riskWeight, format: o.formatWeight, reasoning: o.reasoningWeight },
  }),
  baselines: marketBaselines,
  train: multiTurnTrainPreset,
};

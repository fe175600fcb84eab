/** The hmm env's registration: options, factory and instructions. */
import type { EnvSpec } from '../env.ts';
import { denseTrainPreset } from '../train-presets.ts';
import { HmmEnv } from './env.ts';
import { hmmOptionsSchema, type HmmOptions } from './options.ts';
import { reportRewards } from '../report-options.ts';
import { hmmBaselines } from './baselines.ts';

export const hmmSpec: EnvSpec<HmmOptions> = {
  name: 'hmm',
  description: 'Name the hidden state of a Markov chain from noisy signals (dense; oracle: forward-algorithm posterior)',
  kind: 'dense',
  options: hmmOptionsSchema,
  create: (options) => new HmmEnv(options),
  instructions: (o) =>
    [
      `A hidden Markov chain runs for ${o.horizon} turns. The first message gives its transition probabilities and how each hidden state emits signals.`,
      'Each turn the chain moves and you see one new signal. Call `guess_state` with the state you think the chain is in now, using every signal so far.',
      `You earn 1 for a right guess and 0 otherwise.${o.reveal ? ' After each guess the true state is revealed.' : ''}`,
      ...(o.report ? ['In the same call, give `p_state`: your probability for each hidden state now (they sum to 1); it is scored with a proper scoring rule.'] : []),
    ].join('\n'),
  rewards: reportRewards,
  baselines: hmmBaselines,
  train: denseTrainPreset,
};

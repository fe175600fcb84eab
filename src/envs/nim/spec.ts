/** The `nim` env's registration: options, factory, prompt and exact values. */
import type { EnvSpec } from '../env.ts';
import { nimTrainPreset } from '../train-presets.ts';
import { nimBaselines } from './baselines.ts';
import { NimEnv } from './env.ts';
import { nimOptionsSchema, type NimOptions } from './options.ts';
import { nimOptimalReturn, nimPolicyReturn } from './solver.ts';

export const nimSpec: EnvSpec<NimOptions> = {
  name: 'nim',
  description: 'Normal-play Nim on several heaps against a perfect or random opponent; taking the last object wins.',
  kind: 'outcome',
  options: nimOptionsSchema,
  create: (options) => new NimEnv(options),
  instructions: (options) =>
    'You play Nim. There are numbered heaps of objects. On your turn call take with a heap number and a count ' +
    '(at least 1, at most what that heap holds) to remove objects from that one heap. You and the opponent ' +
    'alternate; whoever takes the last object wins (+1), so if the opponent takes it you lose (-1). ' +
    (options.opponent === 'optimal' ? 'The opponent plays perfectly.' : 'The opponent moves at random.'),
  exact: {
    optimalReturn: nimOptimalReturn,
    policyReturn: nimPolicyReturn,
  },
  baselines: nimBaselines,
  train: nimTrainPreset,
};

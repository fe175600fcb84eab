/** The agent tests' counter env as an EnvSpec, with an option that breaks one seed's episodes. */
import { z } from 'zod';
import type { EnvSpec } from '../../src/envs/env.ts';
import { CounterEnv } from '../agent/counter-env.ts';

const options = z.object({ brokenSeed: z.number().int().default(-1), retry: z.boolean().default(false) }).strict();

export const counterSpec: EnvSpec<z.output<typeof options>> = {
  name: 'counter',
  description: 'reach a target total',
  kind: 'outcome',
  options,
  create: (o) => {
    const env = new CounterEnv(o.retry ? { invalidAction: { mode: 'retry', penalty: -1, maxRetries: 1 } } : {});
    const reset = env.reset.bind(env);
    const step = env.step.bind(env);
    let seed = 0;
    env.reset = (s) => ((seed = s), reset(s));
    env.step = (a) => {
      if (seed === o.brokenSeed) throw new Error(`seed ${seed} is broken`);
      return step(a);
    };
    return env;
  },
  instructions: () => 'Reach the target total without overshooting.',
};

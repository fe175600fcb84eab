/** Spindle's library API: everything the CLI does is available as typed functions and types. */
export { z } from 'zod';

export type * from './core/messages.ts';
export type * from './core/completion.ts';
export type * from './core/trajectory.ts';
export { Rng } from './core/random.ts';
export { meanCi, type MeanCi } from './core/stats.ts';
export { newId } from './core/ids.ts';
export { UsageError } from './core/errors.ts';
export * from './core/schemas.ts';

export type * from './envs/env.ts';
export { builtinEnvs } from './envs/builtin.ts';
export { loadEnvSpec, registerEnv, listEnvs, checkEnvSpec } from './envs/registry.ts';
export { parseEnvOptionPairs, resolveEnvOptions } from './envs/options.ts';

export type * from './policy/policy.ts';
export type * from './rewards/reward.ts';

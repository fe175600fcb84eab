/** The built-in environments, by name. Each env file exports its spec; add it here. */
import type { EnvSpec } from './env.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const builtinEnvs: EnvSpec<any>[] = [];

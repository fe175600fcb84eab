/** The built-in environments, by name. Each env file exports its spec; add it here. */
import type { EnvSpec } from './env.ts';
import { banditSpec } from './bandit/spec.ts';
import { blackjackSpec } from './blackjack/spec.ts';
import { hmmSpec } from './hmm/spec.ts';
import { kellySpec } from './kelly/spec.ts';
import { marketSpec } from './market/spec.ts';
import { newsvendorSpec } from './newsvendor/spec.ts';
import { nimSpec } from './nim/spec.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const builtinEnvs: EnvSpec<any>[] = [blackjackSpec, nimSpec, banditSpec, kellySpec, newsvendorSpec, hmmSpec, marketSpec];

/** The exact value of a policy and of the optimal one, where the env can compute them. */
import type { EnvSpec } from '../envs/env.ts';
import type { Policy } from '../policy/policy.ts';

export interface ExactValues {
  exactReturn: number | null;
  optimalReturn: number | null;
  /** Why a value the env could compute in principle was not computed (e.g. a state space too large). */
  notes: string[];
}

export function exactValues(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec: EnvSpec<any>,
  options: Record<string, unknown>,
  policy: Policy,
): ExactValues {
  const notes: string[] = [];
  const attempt = (what: string, f: () => number): number | null => {
    try {
      return f();
    } catch (err) {
      notes.push(`${what}: ${(err as Error).message}`);
      return null;
    }
  };
  const { policyReturn, optimalReturn } = spec.exact ?? {};
  const distribution = policy.distribution?.bind(policy);
  return {
    exactReturn: policyReturn && distribution ? attempt('exact return', () => policyReturn(options, distribution)) : null,
    optimalReturn: optimalReturn ? attempt('optimal return', () => optimalReturn(options)) : null,
    notes,
  };
}

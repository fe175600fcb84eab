/** Helpers of the envs' simple baseline rules (EnvSpec.baselines). */
import type { Action, DecisionView } from './env.ts';

/** The first legal action at this decision that `matches`; an error naming the rule when none does. */
export function legalActionWhere(view: DecisionView, rule: string, matches: (action: Action) => boolean, wanted: string): Action {
  const action = view.legalActions().find(matches);
  if (!action) throw new Error(`baseline '${rule}': no legal action ${wanted} at this decision`);
  return action;
}

/** The index of the largest value (the first on ties). */
export function argmax(values: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

/**
 * Critic advantage: per-decision credit from a learned table of action values. An outcome env
 * scores an episode once, with all the luck of its draws; GRPO hands that one noisy return to every
 * decision, so a decision whose actions differ by little in value (Blackjack's hard 13–16) gets a
 * signal the noise swamps. The critic pools the returns of every episode that took an action in a
 * state, across the steps of the run, into a running mean,
 *
 *   Q(s, a) ← Q(s, a) + max(1 / n(s, a), rate) · (G − Q(s, a))
 *
 * with G the return-to-go after taking a at s (the episode's own rewards only: Monte Carlo, no
 * oracle), n the visits so far, and `rate` the floor that lets the mean follow a policy that changes.
 * A decision is then judged against the other actions known at its state:
 *
 *   A = (Q(s, a) − mean_b Q(s, b)) / (std_b Q(s, b) + ε)     (scale 'state'; 'none': no division)
 *
 * over the legal actions b taken at s at least `minVisits` times (an answer the env refused is
 * judged against them, not one of them). The baseline depends on the state only, so this is a
 * policy gradient with a lower variance; the division gives every state an update of one size
 * whatever its value gap (as the dense estimator's per-decision groups do), and ε damps the states
 * whose actions the critic finds nearly equal. A decision whose state has fewer than two known actions, or whose own action is not
 * yet known, gets 0.
 *
 * The table is keyed by the env's state (env.state(), recorded on each turn; key 'state') or by the
 * observation's text ('observation'). It is tabular: it suits envs whose decisions recur (Blackjack,
 * Nim), not ones whose every state is new. Advantages read the table as it was before the step
 * (learnActionValues is called after), so a decision is never judged by its own return.
 */
import { z } from 'zod';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import { mean, std } from './moments.ts';
import { INVALID_ACTION_KEY, returnsToGo, turnRewardsOf, type ScoredGroup, type ScoredSample, type TrajectoryAdvantages } from './types.ts';
import { checkScoredGroups, parseOptions } from './validate.ts';

export const criticOptionsSchema = z.strictObject({
  /** What identifies a state: the env's state() as canonical JSON, or the observation's text. */
  key: z.enum(['state', 'observation']).default('state'),
  /** The floor of the running mean's step size (1 / visits until then). */
  rate: z.number().gt(0, 'must be > 0').max(1, 'must be ≤ 1').default(0.02),
  /** Visits an action needs at a state before its value is used. */
  minVisits: z.number().int().min(1).default(4),
  scale: z.enum(['state', 'none']).default('state'),
  /** Added to the per-state std (scale 'state'): gaps well below it give advantages well below 1. */
  epsilon: z.number().min(0, 'must be ≥ 0').default(0.05),
  /** States kept; past it the one updated longest ago is forgotten. */
  maxStates: z.number().int().min(1).default(100_000),
});
export type CriticOptions = z.input<typeof criticOptionsSchema>;
export type CriticSettings = z.output<typeof criticOptionsSchema>;

export interface ActionValue {
  visits: number;
  value: number;
}

/** state key → action → its value; a Map in the order states were last updated (oldest first). */
export type ActionValueTable = Map<string, Map<string, ActionValue>>;

/** Each turn's (state key, action) of a sample; the key as `options.key` says. */
function keyedDecisions(sample: ScoredSample, key: CriticSettings['key'], where: string): { state: string; action: string }[] {
  const turns = turnRewardsOf(sample).length;
  const decisions = sample.decisions;
  if (!decisions || decisions.length !== turns) {
    throw new Error(`critic advantage: ${where}.decisions must list the ${turns} turn(s) of the sample, got ${decisions ? decisions.length : 'none'}`);
  }
  return decisions.map((d, k) => {
    if (key === 'observation') return { state: d.state, action: d.action };
    if (d.envState === undefined) throw new Error(`critic advantage: ${where}.decisions.${k}.envState is missing (the turn recorded no env state; use key 'observation')`);
    return { state: d.envState, action: d.action };
  });
}

/**
 * A(s, a) from the table, 0 where it knows too little. The baseline and spread are over the legal
 * actions: a refused answer is judged against them but does not enter them (with the default
 * samples.invalidAnswers 'penalize' it trains at the penalty anyway).
 */
function advantageOf(table: ActionValueTable, state: string, action: string, o: CriticSettings): number {
  const actions = table.get(state);
  const own = actions?.get(action);
  if (!actions || !own || own.visits < o.minVisits) return 0;
  const values = [...actions].filter(([a, v]) => a !== INVALID_ACTION_KEY && v.visits >= o.minVisits).map(([, v]) => v.value);
  if (values.length < 2) return 0;
  const centred = own.value - mean(values);
  if (o.scale === 'none') return centred;
  const spread = std(values, 'population') + o.epsilon;
  return spread > 0 ? centred / spread : 0;
}

export function criticAdvantages(groups: readonly ScoredGroup[], table: ActionValueTable, options: CriticOptions = {}): TrajectoryAdvantages[] {
  checkScoredGroups(groups);
  const o = parseOptions(criticOptionsSchema, options, 'critic');
  return groups.flatMap((group, g) =>
    group.samples.map((s, i) => ({
      trajectoryId: s.trajectoryId,
      groupId: group.groupId,
      turnAdvantages: keyedDecisions(s, o.key, `groups.${g}.samples.${i}`).map((d) => advantageOf(table, d.state, d.action, o)),
    })),
  );
}

/** Folds the returns of these samples into the table (in place), forgetting the stalest states past maxStates. */
export function learnActionValues(table: ActionValueTable, groups: readonly ScoredGroup[], options: CriticOptions = {}): void {
  checkScoredGroups(groups);
  const o = parseOptions(criticOptionsSchema, options, 'critic');
  groups.forEach((group, g) =>
    group.samples.forEach((s, i) => {
      const togo = returnsToGo(s);
      keyedDecisions(s, o.key, `groups.${g}.samples.${i}`).forEach(({ state, action }, k) => {
        let actions = table.get(state);
        if (actions) table.delete(state); // re-inserted last: the most recently updated
        else actions = new Map();
        table.set(state, actions);
        const v = actions.get(action) ?? { visits: 0, value: 0 };
        v.visits += 1;
        v.value += Math.max(1 / v.visits, o.rate) * (togo[k] - v.value);
        actions.set(action, v);
      });
    }),
  );
  for (const state of table.keys()) {
    if (table.size <= o.maxStates) break;
    table.delete(state);
  }
}

/** The table as JSON (checkpoints): [state, [[action, visits, value], ...]] in update order. */
export type ActionValueJson = [string, [string, number, number][]][];

export function actionValuesToJson(table: ActionValueTable): ActionValueJson {
  return [...table].map(([state, actions]) => [state, [...actions].map(([a, v]): [string, number, number] => [a, v.visits, v.value])]);
}

const actionValueJsonSchema = z.array(z.tuple([z.string(), z.array(z.tuple([z.string(), z.number().int().min(1), z.number()]))]));

export function actionValuesFromJson(json: unknown, label: string): ActionValueTable {
  const parsed = actionValueJsonSchema.safeParse(json);
  if (!parsed.success) throw new UsageError(`${label}: ${describeZodError(parsed.error)}`);
  return new Map(parsed.data.map(([state, actions]) => [state, new Map(actions.map(([a, visits, value]) => [a, { visits, value }]))]));
}

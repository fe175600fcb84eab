/**
 * Dense per-decision groups (DESIGN rule 5, dense envs). When an env can score every legal
 * action of a decision exactly (`actionRewards()`), sample k actions at that one decision and
 * compare them with each other: GRPO within the decision,
 *
 *   r_j = E[reward | state, a_j]  (exact, from the env)      A_j = (r_j − mean(r)) / (σ + ε)
 *
 * Exact expected rewards remove the luck of the draw that an episode's return carries, so no
 * branching or replay is needed. σ, ε and ties follow grpo.ts (sample std, 1e-4, tied → 0).
 */
import { z } from 'zod';
import { describeZodError } from '../core/schemas.ts';
import type { Action, ActionValue } from '../envs/env.ts';
import { groupRelative } from './grpo.ts';
import { epsilonOption, parseOptions, stdOption } from './validate.ts';

/** One of the k actions sampled at a decision, scored with the env's exact expected reward. */
export interface DecisionSample {
  /** Identifies the sampled completion (e.g. `${decisionId}:${j}`), to find its tokens again. */
  sampleId: string;
  reward: number;
}

/** The k samples drawn at one decision of one episode. */
export interface DecisionGroup {
  /** The decision's id. */
  groupId: string;
  samples: DecisionSample[];
}

export interface DecisionAdvantage {
  groupId: string;
  sampleId: string;
  advantage: number;
}

export const denseOptionsSchema = z.strictObject({ epsilon: epsilonOption, std: stdOption });
export type DenseOptions = z.input<typeof denseOptionsSchema>;

const decisionGroupsSchema = z.array(
  z.object({
    groupId: z.string().min(1),
    samples: z
      .array(z.object({ sampleId: z.string().min(1), reward: z.number() }))
      .min(1, 'a decision group needs at least one sample'),
  }),
);

export function denseAdvantages(groups: readonly DecisionGroup[], options: DenseOptions = {}): DecisionAdvantage[] {
  const parsed = decisionGroupsSchema.safeParse(groups);
  if (!parsed.success) {
    throw new Error(`advantage input: ${describeZodError(parsed.error, 'decisions')}`);
  }
  const o = parseOptions(denseOptionsSchema, options, 'dense');
  const A = groupRelative(
    groups.map((g) => g.samples.map((s) => s.reward)),
    { scale: 'group', ...o },
  );
  return groups.flatMap((g, d) =>
    g.samples.map((s, j) => ({ groupId: g.groupId, sampleId: s.sampleId, advantage: A[d][j] })),
  );
}

/**
 * The exact reward of each sampled action, looked up in the env's `actionRewards()` by tool name
 * and arguments (key order ignored). `null` marks a sample that was not a legal action (it did
 * not parse, or `env.validate` rejected it): it scores `invalidReward`, the env's penalty.
 * A non-null action missing from the table means the caller skipped validation: that throws.
 */
export function sampledActionRewards(
  actionRewards: readonly ActionValue[],
  sampled: readonly (Action | null)[],
  invalidReward: number,
): number[] {
  if (!Number.isFinite(invalidReward)) throw new Error(`invalidReward: must be a finite number, got ${invalidReward}`);
  const table = new Map<string, number>();
  actionRewards.forEach(({ action, expectedReward }, i) => {
    if (typeof expectedReward !== 'number' || !Number.isFinite(expectedReward)) {
      throw new Error(`env actionRewards().${i}.expectedReward: must be a finite number, got ${String(expectedReward)}`);
    }
    const key = actionKey(action);
    if (table.has(key)) throw new Error(`env actionRewards().${i}.action: ${key} is listed twice`);
    table.set(key, expectedReward);
  });
  return sampled.map((action, j) => {
    if (action === null) return invalidReward;
    const reward = table.get(actionKey(action));
    if (reward === undefined) {
      throw new Error(
        `sampled.${j}: ${actionKey(action)} is not among the env's scored actions; pass null for an action env.validate rejects`,
      );
    }
    return reward;
  });
}

/** `name(arguments)` with object keys sorted at every depth, so equal actions give equal keys. */
function actionKey(action: Action): string {
  return `${action.name}(${canonicalJson(action.arguments)})`;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

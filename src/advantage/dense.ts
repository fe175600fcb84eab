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

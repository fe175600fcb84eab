/**
 * The trainer's one call: an estimator over scored groups, then optional zero-variance dropping,
 * whitening and clipping, and the stats to log. Config is plain JSON, e.g.
 *   { estimator: 'grpo', scale: 'group', dropZeroVariance: true }
 *   { estimator: 'gae', gamma: 1, lambda: 0.95, whiten: true, clip: 5 }
 *   { estimator: 'tree' }   per-decision credit from the history a group's samples share (tree.ts)
 *   { estimator: 'critic' } per-decision credit from a table of action values learned across steps
 *                           (critic.ts; the caller keeps the table and folds each batch into it)
 *   { estimator: 'dense' }  per-decision groups of a dense env (dense.ts): a different unit (the
 *                           samples of one decision), computed by decisionAdvantages
 *                           (from-decisions.ts), not here
 */
import { z } from 'zod';
import { gaeAdvantages, gaeOptionsSchema, type TurnValues } from './gae.ts';
import { grpoAdvantages, grpoOptionsSchema } from './grpo.ts';
import { advantageStats, clip, dropZeroVarianceGroups, whiten, type AdvantageStats } from './normalize.ts';
import { outcomeAdvantages, outcomeOptionsSchema } from './outcome.ts';
import { rlooAdvantages } from './rloo.ts';
import { treeAdvantages, treeOptionsSchema } from './tree.ts';
import type { ScoredGroup, TrajectoryAdvantages } from './types.ts';
import { checkScoredGroups, parseOptions } from './validate.ts';
import { denseOptionsSchema } from './dense.ts';
import { criticAdvantages, criticOptionsSchema, learnActionValues, type ActionValueTable, type CriticOptions } from './critic.ts';

const postprocess = {
  /** Drop groups whose rewards are all equal (or that have one sample) before estimating. */
  dropZeroVariance: z.boolean().default(false),
  /** Whiten every turn's advantage across the batch. */
  whiten: z.boolean().default(false),
  whitenEpsilon: z.number().min(0).default(1e-8),
  /** Clamp advantages to [−clip, clip] after whitening; null: no clipping. */
  clip: z.number().positive('must be > 0 (or null for no clipping)').nullable().default(null),
};

export const advantageConfigSchema = z.discriminatedUnion('estimator', [
  grpoOptionsSchema.extend({ estimator: z.literal('grpo'), ...postprocess }),
  z.strictObject({ estimator: z.literal('rloo'), ...postprocess }),
  gaeOptionsSchema.extend({ estimator: z.literal('gae'), ...postprocess }),
  outcomeOptionsSchema.extend({ estimator: z.literal('outcome'), ...postprocess }),
  treeOptionsSchema.extend({ estimator: z.literal('tree'), ...postprocess }),
  criticOptionsSchema.extend({ estimator: z.literal('critic'), ...postprocess }),
  denseOptionsSchema.extend({
    estimator: z.literal('dense'),
    dropZeroVariance: postprocess.dropZeroVariance,
    /**
     * Per decision, up to this many legal actions that none of its answers took join its group as
     * answers written by the trainer (train/explored-answers.ts), so a decision whose answers all
     * agree still compares its action with others. 0: none.
     */
    explore: z.number().int().min(0, 'must be ≥ 0').max(64, 'must be ≤ 64').default(0),
  }),
]);
export type AdvantageConfig = z.input<typeof advantageConfigSchema>;

export interface AdvantageResult {
  /** One entry per trajectory of the groups kept, in input order. */
  advantages: TrajectoryAdvantages[];
  /** Ids of the zero-variance groups dropped (empty unless `dropZeroVariance`). */
  dropped: string[];
  stats: AdvantageStats;
}

/** What some estimators read beside the groups: gae a value head's estimates per trajectory, critic its table. */
export interface EstimatorInputs {
  values?: TurnValues;
  actionValues?: ActionValueTable;
}

export function computeAdvantages(groups: readonly ScoredGroup[], config: AdvantageConfig, inputs: EstimatorInputs = {}): AdvantageResult {
  const c = parseOptions(advantageConfigSchema, config, 'advantage');
  if (c.estimator === 'dense') throw new Error('advantage: the dense estimator scores decisions, not trajectories (decisionAdvantages in from-decisions.ts)');
  checkScoredGroups(groups);
  const { values } = inputs;
  if (values && c.estimator !== 'gae') {
    throw new Error(`advantage: values are only used by the gae estimator, not ${c.estimator}`);
  }
  const { kept, dropped } = c.dropZeroVariance ? dropZeroVarianceGroups(groups) : { kept: [...groups], dropped: [] };

  let advantages: TrajectoryAdvantages[];
  switch (c.estimator) {
    case 'grpo':
      advantages = grpoAdvantages(kept, { scale: c.scale, epsilon: c.epsilon, std: c.std });
      break;
    case 'rloo':
      advantages = rlooAdvantages(kept);
      break;
    case 'gae':
      advantages = gaeAdvantages(kept, { gamma: c.gamma, lambda: c.lambda }, values);
      break;
    case 'outcome':
      advantages = outcomeAdvantages(kept, { epsilon: c.epsilon, std: c.std });
      break;
    case 'tree':
      advantages = treeAdvantages(kept, { scale: c.scale, epsilon: c.epsilon, std: c.std });
      break;
    case 'critic':
      advantages = criticAdvantages(kept, criticTable(inputs), criticOptionsOf(c));
      break;
  }
  if (c.whiten) advantages = whiten(advantages, c.whitenEpsilon);
  if (c.clip !== null) advantages = clip(advantages, c.clip);

  const stats = advantageStats(
    advantages.flatMap((a) => a.turnAdvantages),
    groups,
    dropped,
  );
  return { advantages, dropped, stats };
}

function criticTable(inputs: EstimatorInputs): ActionValueTable {
  if (!inputs.actionValues) throw new Error('advantage: the critic estimator needs its table of action values (inputs.actionValues)');
  return inputs.actionValues;
}

function criticOptionsOf(c: Extract<z.output<typeof advantageConfigSchema>, { estimator: 'critic' }>): CriticOptions {
  const { estimator: _estimator, dropZeroVariance: _drop, whiten: _whiten, whitenEpsilon: _whitenEpsilon, clip: _clip, ...options } = c;
  return options;
}

/**
 * After a step's advantages: folds its groups (all of them, ties included) into what the estimator
 * learns across steps, the critic's table; nothing for the other estimators.
 */
export function learnFromBatch(groups: readonly ScoredGroup[], config: AdvantageConfig, inputs: EstimatorInputs): void {
  const c = parseOptions(advantageConfigSchema, config, 'advantage');
  if (c.estimator !== 'critic') return;
  learnActionValues(criticTable(inputs), groups, criticOptionsOf(c));
}

/**
 * The tabular control (issue 4): a softmax table trained by the SAME pipeline as the LLM, rollouts
 * (runRollouts, G samples per seed) → advantages (computeAdvantages) → policy loss (policyLoss on
 * [B, 1] log-probabilities gathered from the table by one-hot) → AdamW (ParamTrainer), with the
 * env's outcome reward only. Every `evalEvery` episodes the exact expected return of the stochastic
 * policy and of its greedy table is computed with the env's solver (spec.exact.policyReturn), so the
 * number of episodes it needs to come within a gap of the optimum can be read off the history.
 */
import { z } from 'zod';
import { advantageConfigSchema, computeAdvantages, learnFromBatch } from '../advantage/compute.ts';
import type { ActionValueTable } from '../advantage/critic.ts';
import { scoredGroupsFromTrajectories } from '../advantage/from-trajectories.ts';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import type { EnvSpec } from '../envs/env.ts';
import { nn, np } from '../model/engine.ts';
import { ParamTrainer } from '../model/param-trainer.ts';
import type { Params } from '../model/params.ts';
import { runRollouts } from '../rollout/rollouts.ts';
import { adamwConfigSchema } from '../model/adamw.ts';
import { lossConfigSchema, parseLossConfig } from './loss-config.ts';
import { klBetaAnnealShareSchema, klBetaAt } from './train-config.ts';
import { policyLoss } from './loss-rl.ts';
import { TabularPolicy } from './tabular.ts';
import { paddedRows, tabularBatchTensors, tabularDecisions, type TabularBatchTensors } from './tabular-batch.ts';
import type { TabularSpace } from './tabular-space.ts';

export const tabularTrainConfigSchema = z.strictObject({
  /** G: episodes per seed, compared with each other by the advantage estimator. */
  groupSize: z.number().int().min(1).default(4),
  /** Seeds per rollout batch; a batch is groupsPerBatch × groupSize episodes. */
  groupsPerBatch: z.number().int().min(1).default(32),
  /** Optimiser steps on each batch; above 1 the ratio moves away from 1 and the clip acts. */
  updatesPerBatch: z.number().int().min(1).default(1),
  /** Episodes to play in all. */
  maxEpisodes: z.number().int().min(1).default(200_000),
  /** Episodes between exact evaluations (also done at 0 and at the end). */
  evalEvery: z.number().int().min(1).default(5_000),
  /** Stop at the first evaluation where both the stochastic policy and its greedy table are within this of the optimum. */
  stopWithin: z.number().positive().nullable().default(null),
  seed: z.number().int().min(0).default(0),
  concurrency: z.number().int().min(1).default(64),
  advantage: advantageConfigSchema.prefault({ estimator: 'grpo' }),
  loss: lossConfigSchema.prefault({}),
  /** β at the last batch as a share of loss.klBeta, linear from the first (as the LLM trainer's `loss.klBetaEndRatio`). */
  klBetaEndRatio: z.number().min(0, 'must be ≥ 0').max(1, 'must be ≤ 1').default(1),
  /** The share of the batches over which β reaches it (as the LLM trainer's `loss.klBetaAnnealShare`). */
  klBetaAnnealShare: klBetaAnnealShareSchema,
  optimizer: adamwConfigSchema.prefault({ lr: 0.1 }),
});
export type TabularTrainConfig = z.input<typeof tabularTrainConfigSchema>;
export type TabularTrainSettings = z.output<typeof tabularTrainConfigSchema>;

export function parseTabularTrainConfig(config: unknown): TabularTrainSettings {
  const parsed = tabularTrainConfigSchema.safeParse(config ?? {});
  if (!parsed.success) throw new UsageError(`tabular training options: ${describeZodError(parsed.error, 'tabular')}`);
  parseLossConfig(parsed.data.loss, 'tabular.loss'); // cross-field checks
  return parsed.data;
}

export interface TabularEvalPoint {
  episodes: number;
  steps: number;
  /** Exact expected return of the softmax policy itself (temperature 1). */
  stochasticReturn: number;
  /** Exact expected return of its greedy table (argmax per state). */
  greedyReturn: number;
}

export interface TabularTrainResult {
  optimalReturn: number;
  history: TabularEvalPoint[];
  episodes: number;
  steps: number;
  /** The last step's loss metrics (clip fractions, ratio, entropy, ...). */
  lastMetrics: Record<string, number>;
  /** Mean return of the episodes played (the sampled returns, for reference). */
  playedMeanReturn: number;
  wallMs: number;
  rolloutMs: number;
  trainMs: number;
  /** The final table, row-major [states × actions]. */
  logits: Float32Array;
}

/** Seeds of different runs never overlap (a run plays at most this many seeds). */
const SEEDS_PER_RUN = 1_000_000_000;
/** Batches are padded to a multiple of this many rows, so a run compiles a handful of shapes. */
const ROW_MULTIPLE = 128;

/** Row-wise log-softmax of a row-major [rows × width] table. */
function logSoftmaxRows(logits: Float32Array, width: number): Float32Array {
  const out = new Float32Array(logits.length);
  for (let r = 0; r < logits.length; r += width) {
    const row = logits.subarray(r, r + width);
    const max = Math.max(...row);
    const logSum = max + Math.log(row.reduce((sum, x) => sum + Math.exp(x - max), 0));
    for (let j = 0; j < width; j++) out[r + j] = row[j] - logSum;
  }
  return out;
}

/** The loss of a table [states, actions] on a batch: log π(a | s) by one-hot gathers, then policyLoss. */
function tableLoss(space: TabularSpace, settings: TabularTrainSettings['loss']) {
  const states = space.stateKeys.length;
  const actions = space.actions.length;
  const loss = parseLossConfig(settings);
  return (params: Params, b: TabularBatchTensors) => {
    const logp = nn.logSoftmax(params.logits, -1); // [S, A]
    const rows = np.matmul(nn.oneHot(b.states, states), logp); // [B, A]: log π(· | s_b)
    const newLogprobs = rows.ref.mul(nn.oneHot(b.actions, actions)).sum(-1, { keepdims: true }); // [B, 1]
    const entropy = np.exp(rows.ref).mul(rows).sum(-1, { keepdims: true }).neg(); // H = −Σ p log p
    return policyLoss(
      { newLogprobs, samplingLogprobs: b.samplingLogprobs, advantages: b.advantages, mask: b.mask, entropy, refLogprobs: b.refLogprobs, klBeta: b.klBeta },
      loss,
    );
  };
}

export async function trainTabular<O extends Record<string, unknown>>(
  spec: EnvSpec<O>,
  envOptions: O,
  space: TabularSpace,
  config: TabularTrainConfig = {},
  onEval?: (point: TabularEvalPoint) => void,
): Promise<TabularTrainResult> {
  const c = parseTabularTrainConfig(config);
  const exact = spec.exact;
  if (!exact?.policyReturn || !exact.optimalReturn) throw new UsageError(`env '${spec.name}' has no exact policy evaluation`);
  const policyReturn = exact.policyReturn;
  const start = performance.now();
  const policy = new TabularPolicy(space, { name: 'tabular' });
  const shape = [space.stateKeys.length, space.actions.length];
  const trainer = new ParamTrainer<TabularBatchTensors>({ logits: np.zeros(shape) }, tableLoss(space, c.loss), c.optimizer);
  // The KL's reference is the table RL starts from (uniform), as the LLM's is its warm start.
  const referenceLogprobs = c.loss.klBeta > 0 ? logSoftmaxRows(policy.logits(), space.actions.length) : null;
  const batches = Math.ceil(c.maxEpisodes / (c.groupsPerBatch * c.groupSize));
  const klBetaOf = (batch: number) => klBetaAt({ ...c, klBeta: c.loss.klBeta }, batch + 1, batches);

  const history: TabularEvalPoint[] = [];
  // The critic estimator's action values, learned across the batches (advantage.estimator 'critic').
  const actionValues: ActionValueTable = new Map();
  let episodes = 0;
  let steps = 0;
  let rolloutMs = 0;
  let trainMs = 0;
  let returnSum = 0;
  let lastMetrics: Record<string, number> = {};
  const evaluate = (): TabularEvalPoint => {
    const point = {
      episodes,
      steps,
      stochasticReturn: policyReturn(envOptions, (view) => policy.distribution(view)),
      greedyReturn: policyReturn(envOptions, (view) => policy.greedyDistribution(view)),
    };
    history.push(point);
    onEval?.(point);
    return point;
  };
  const optimalReturn = exact.optimalReturn(envOptions);
  const reached = (p: TabularEvalPoint) =>
    c.stopWithin !== null && optimalReturn - p.stochasticReturn <= c.stopWithin && optimalReturn - p.greedyReturn <= c.stopWithin;

  try {
    let nextEval = c.evalEvery;
    let batch = 0; // rollout batches trained so far (the β schedule's clock)
    let point = evaluate();
    while (episodes < c.maxEpisodes && !reached(point)) {
      const groups = Math.min(c.groupsPerBatch, Math.ceil((c.maxEpisodes - episodes) / c.groupSize));
      const t0 = performance.now();
      const rollout = await runRollouts({
        spec,
        options: envOptions,
        policy,
        count: groups,
        baseSeed: c.seed * SEEDS_PER_RUN + episodes / c.groupSize,
        groupSize: c.groupSize,
        concurrency: c.concurrency,
      });
      const failed = rollout.trajectories.filter((t) => t.status === 'failed');
      if (failed.length > 0) throw new Error(`tabular rollouts: ${failed.length} episodes failed: ${failed[0].statusReason}`);
      const t1 = performance.now();
      rolloutMs += t1 - t0;
      episodes += rollout.trajectories.length;
      for (const t of rollout.trajectories) returnSum += t.reward;

      const scored = scoredGroupsFromTrajectories(rollout.trajectories);
      const advantages = computeAdvantages(scored, c.advantage, { actionValues });
      learnFromBatch(scored, c.advantage, { actionValues });
      const decisions = tabularDecisions(rollout.trajectories, advantages.advantages);
      if (decisions.states.length > 0) {
        const rows = paddedRows(decisions.states.length, ROW_MULTIPLE);
        for (let u = 0; u < c.updatesPerBatch; u++) {
          const reference = referenceLogprobs && { logprobs: referenceLogprobs, actions: space.actions.length, klBeta: klBetaOf(batch) };
          const result = await trainer.step(tabularBatchTensors(decisions, rows, reference ?? undefined));
          steps++;
          lastMetrics = { ...result.metrics, loss: result.loss, gradNorm: result.gradNorm };
          policy.setLogits(await trainer.params.logits.ref.data(), steps);
        }
      }
      batch++;
      trainMs += performance.now() - t1;
      if (episodes >= nextEval || episodes >= c.maxEpisodes) {
        point = evaluate();
        while (nextEval <= episodes) nextEval += c.evalEvery;
      }
    }
    return {
      optimalReturn,
      history,
      episodes,
      steps,
      lastMetrics,
      playedMeanReturn: episodes > 0 ? returnSum / episodes : NaN,
      wallMs: performance.now() - start,
      rolloutMs,
      trainMs,
      logits: policy.logits(),
    };
  } finally {
    trainer.dispose();
  }
}

/** The first evaluation at which a return came within `gap` of the optimum (null: never). */
export function episodesToReach(
  result: Pick<TabularTrainResult, 'history' | 'optimalReturn'>,
  which: 'stochasticReturn' | 'greedyReturn',
  gap: number,
): number | null {
  const hit = result.history.find((p) => result.optimalReturn - p[which] <= gap);
  return hit ? hit.episodes : null;
}

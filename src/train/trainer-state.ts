/**
 * trainer-state.json: what a checkpoint needs beyond weights and optimiser moments to continue a run
 * exactly. Every random draw of a step is derived from (run seed, step) (trainer-seeds.ts, the agent
 * loop's per-call seeds, the mini-batch shuffles), so the RNG state is the seed and the next step.
 */
import { z } from 'zod';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import { trainConfigSchema, type TrainSettings } from './train-config.ts';

export const TRAINER_STATE_FORMAT = 'spindle-trainer-state/1';

export const warmStartSummarySchema = z.object({
  steps: z.number().int().min(0),
  /** Of those, the last ones on every legal action's answer (warm-start.ts); 0 in runs from before them. */
  answerSteps: z.number().int().min(0).default(0),
  reached: z.boolean(),
  invalidRate: z.number().nullable(),
  meanReturn: z.number().nullable(),
  seconds: z.number().min(0),
  /** The warm-started weights, relative to the run folder. */
  path: z.string(),
  /** Where RL started: `RUN`, the run whose warm start this run reused (`--warm-start`), or `RUN@STEP`, another run's checkpoint (`--init-from`); its seconds are that run's. null: its own warm start. */
  from: z.string().nullable().default(null),
});
export type WarmStartSummary = z.infer<typeof warmStartSummarySchema>;

/** 'average': the weight average (weight-average.ts); a number: RL's own weights after that step. */
const handOverWeightsSchema = z.union([z.literal('average'), z.number().int().min(1)]);
export type HandOverWeights = z.infer<typeof handOverWeightsSchema>;

/** One candidate for the handed-over policy and its greedy play on the validation seeds (handover-select.ts). */
const validatedCandidateSchema = z.object({
  weights: handOverWeightsSchema,
  meanReturn: z.number(),
  ci95: z.tuple([z.number(), z.number()]),
  /** Validation episodes that failed (the mean is over the others). */
  failed: z.number().int().min(0),
});
export type ValidatedCandidate = z.infer<typeof validatedCandidateSchema>;

/** How the run chose the policy it hands over (train-config.ts `select`). */
export const handOverSelectionSchema = z.object({
  /** The validation seeds: `episodes` of them from `firstSeed`. */
  firstSeed: z.number().int().min(0),
  episodes: z.number().int().min(1),
  candidates: z.array(validatedCandidateSchema).min(1),
  chosen: handOverWeightsSchema,
});
export type HandOverSelection = z.infer<typeof handOverSelectionSchema>;

export const trainerStateSchema = z.object({
  format: z.literal(TRAINER_STATE_FORMAT),
  runId: z.string(),
  env: z.string(),
  envOptions: z.record(z.string(), z.unknown()),
  /** RL steps done; the checkpoint's weights are policy version `policyVersion`. */
  step: z.number().int().min(0),
  policyVersion: z.number().int().min(0),
  rng: z.object({ seed: z.number().int().min(0), nextStep: z.number().int().min(1) }),
  config: z.unknown(),
  /** Settings measured at the start of the run that later steps must keep. */
  maxTurns: z.number().int().min(1),
  maxTokens: z.number().int().min(1),
  prefixLength: z.number().int().min(0).nullable(),
  /** RL's row length (measured when the config left it open); absent in older checkpoints: the config's, else 128. */
  rowLength: z.number().int().min(1).nullable().default(null),
  episodes: z.number().int().min(0),
  /** Wall time spent so far (every earlier session of the run). */
  wallSeconds: z.number().min(0),
  warmStart: warmStartSummarySchema.nullable(),
  /**
   * The weight average under way (weight-average.ts): its first step and the snapshots in it; the
   * checkpoint's model weights are then the average and `rl-weights.safetensors` RL's own. Null
   * (or absent, in older checkpoints): none yet.
   */
  weightAverage: z
    .object({ firstStep: z.number().int().min(1), count: z.number().int().min(1) })
    .nullable()
    .default(null),
  /**
   * The KL's reference when a reset replaced the warm start (train-config.ts loss.referenceResetEvery):
   * the RL step whose weights it holds, saved beside the model as `reference-weights.safetensors`.
   * Null (or absent, in older checkpoints): the warm start.
   */
  reference: z.object({ step: z.number().int().min(1) }).nullable().default(null),
  /**
   * At the run's last step, when `select` chose the handed-over policy: the candidates and the one
   * chosen, which the checkpoint's model weights then hold (RL's own in `rl-weights.safetensors`, the
   * weight average in `average-weights.safetensors` where they differ). Null (or absent): no choice.
   */
  handOver: handOverSelectionSchema.nullable().default(null),
  /** The critic estimator's table of action values (critic.ts, actionValuesToJson); null under the other estimators. */
  actionValues: z.unknown().default(null),
  /** Per-step metrics so far, by step. */
  metrics: z.record(z.string(), z.record(z.string(), z.number().nullable())),
});
export type TrainerState = Omit<z.infer<typeof trainerStateSchema>, 'config'> & { config: TrainSettings };

export function parseTrainerState(json: unknown, label: string): TrainerState {
  const parsed = trainerStateSchema.safeParse(json);
  if (!parsed.success) throw new UsageError(`${label}: ${describeZodError(parsed.error)}`);
  const config = trainConfigSchema.safeParse(parsed.data.config);
  if (!config.success) throw new UsageError(`${label}: config: ${describeZodError(config.error)}`);
  return { ...parsed.data, config: config.data };
}

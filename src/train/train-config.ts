/**
 * The configuration of `spindle train`: plain JSON (a --config file), flags on top, every field
 * validated with zod; a bad field is a UsageError that names it (`train.warmStart.maxSteps: ...`).
 * Defaults are the ones measured to train Blackjack's default model in minutes on 2 cores
 * (bench/train.ts).
 */
import { z } from 'zod';
import { advantageConfigSchema } from '../advantage/compute.ts';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import { adamwConfigSchema, parseAdamWConfig } from '../model/adamw.ts';
import { DIGIT_SPLITS } from '../model/tokenizer/tokenizer-json.ts';
import { formatAnchorSchema } from './format-anchor.ts';
import { loraConfigSchema } from './lora-config.ts';
import { lossConfigSchema, parseLossConfig } from './loss-config.ts';
import { samplesConfigSchema } from './samples-config.ts';

const positiveInt = z.number().int().positive();
const seedInt = z.number().int().min(0).max(999_999);
/** AdamW's fields, strict (an unknown key is a typo). */
const optimizerSchema = z.strictObject(adamwConfigSchema.shape);

export const modelShapeSchema = z.strictObject({
  /** Largest vocabulary the env's tokenizer may learn (it stops earlier when the corpus runs out of pairs). */
  vocabSize: z.number().int().min(300).max(65535).default(2048),
  /** Random episodes played to build the tokenizer's corpus. */
  corpusEpisodes: positiveInt.default(200),
  /** How the tokenizer cuts numbers: 'runs' of up to three digits (the default) or 'single' digits (tokenizer-json.ts). */
  digits: z.enum(DIGIT_SPLITS).default('runs'),
  hiddenSize: positiveInt.optional(),
  intermediateSize: positiveInt.optional(),
  numLayers: positiveInt.optional(),
  numHeads: positiveInt.optional(),
  numKvHeads: positiveInt.optional(),
  headDim: positiveInt.optional(),
  maxPositionEmbeddings: positiveInt.optional(),
});

export const warmStartSchema = z.strictObject({
  /** Supervised steps at most; the warm start stops earlier once the format is learned. */
  maxSteps: z.number().int().min(0).default(400),
  /** Supervised steps at least (with languageModel, reading the observations takes longer than the format). */
  minSteps: z.number().int().min(0).default(150),
  /** Demonstrated answers per step. */
  batchSize: positiveInt.default(32),
  /** Random-policy episodes whose answers are the demonstrations. */
  demoEpisodes: positiveInt.default(1000),
  /**
   * Steps between format checks (sampled episodes on held-out seeds). The first, after minSteps,
   * samples the weights the warm start would hand over (after the answerSteps); if it fails, the
   * later ones sample the language-model phase's weights, and the last answers-only round follows
   * the first of them that passes (warm-start.ts).
   */
  checkEvery: positiveInt.default(25),
  checkEpisodes: positiveInt.default(64),
  /** The format is learned when the invalid-answer rate of sampled answers is below this. */
  targetInvalidRate: z.number().min(0).max(1).default(0.02),
  /**
   * Also predict the observations, not only the answers (warm-start-demos.ts): the model learns to
   * read the env's text; no strategy (the answers are random, no reward is in the sequences). On by
   * default: measured on Blackjack, after an answers-only warm start RL never made the answer depend
   * on the state (the same probability in every state to three decimals); after this one it did.
   */
  languageModel: z.boolean().default(true),
  /**
   * Share of the demonstrated decisions whose first answer is an action the env refuses, followed
   * by the env's feedback and a legal answer, the one trained (warm-start-refusals.ts): the model
   * learns to answer after a refusal. Only in envs that retry a refused answer. 0: none.
   */
  refusals: z.number().min(0).max(0.5).default(0),
  /**
   * Supervised steps that end the warm start on the answers alone, every legal action's answer at
   * each decision side by side (warm-start-demos.ts answerGroup), from a fresh optimiser at
   * `answerLr` decaying to 0; a batch is `batchSize` decisions. RL's KL term holds the policy near the
   * warm start, so a warm start that prefers an action skews every state's choice: measured on
   * Blackjack, P(stick) after the language-model phase was 0.41–0.62 depending on the seed, the same
   * in every state; after these steps 0.45–0.51.
   */
  answerSteps: z.number().int().min(0).default(50),
  answerLr: z.number().positive().default(1e-3),
  optimizer: optimizerSchema.prefault({ lr: 3e-3, warmupSteps: 10 }),
});

/** `loss.klBetaAnnealShare`, also the tabular control's. */
export const klBetaAnnealShareSchema = z.number().gt(0, 'must be > 0').max(1, 'must be ≤ 1').default(1);

export const trainConfigSchema = z.strictObject({
  /**
   * RL steps (one rollout batch each). 250: on Blackjack (seed 1, G 8 × 32, cosine decay) a run of
   * 150 steps ended at −0.073 exact (the decay stops it near stick-at-17's level); 250 steps reached
   * −0.060 by step 125.
   */
  steps: z.number().int().min(0).default(250),
  seed: seedInt.default(0),
  /**
   * G: samples per seed, compared with each other. An env like Blackjack deals the same cards to
   * every sample of a seed, so a group compares actions on one deal; identical samples train once
   * (samples.mergeIdentical), so a step costs about its distinct samples, and the deals are what
   * the learning needs: the tabular control (`npm run bench -- tabular-blackjack`) came within 0.02
   * of the optimum after 35,072 episodes at G 4 × 32 and 58,880 at G 8 × 32 (~8,800 and ~7,400
   * deals). On the default model, 4 × 64 (twice the deals of 8 × 32 for the same 256 episodes a
   * step) ended 250 steps at exact returns −0.0665 / −0.0830 / −0.0747 (seeds 1–3; mean of the
   * evaluations at steps 150–250 −0.0781 / −0.0689 / −0.0767) where 8 × 32 ended at −0.0782 /
   * −0.0803 / −0.0742 (mean at steps 150–250 −0.1042 / −0.1054 / −0.0728).
   */
  groupSize: z.number().int().min(1).max(1024).default(4),
  /** Seeds per step; a step plays batchSeeds × groupSize episodes. */
  batchSeeds: z.number().int().min(1).max(100_000).default(64),
  /** Steps between evaluations on held-out seeds (also after the warm start and at the end). */
  evalEvery: z.number().int().min(1).default(25),
  /** Greedy episodes per periodic evaluation. */
  evalEpisodes: positiveInt.default(200),
  /** Episodes per policy in the final evaluation. */
  finalEvalEpisodes: positiveInt.default(2000),
  /** Steps between checkpoints (the last step is always checkpointed). */
  checkpointEvery: z.number().int().min(1).default(50),
  /** Engine threads; null: every core. */
  threads: z.number().int().min(1).max(256).nullable().default(null),
  model: modelShapeSchema.prefault({}),
  warmStart: warmStartSchema.prefault({}),
  episode: z
    .strictObject({
      /** Decisions per episode before truncation; null: the env's own cap (or 32). */
      maxTurns: positiveInt.nullable().default(null),
      /** Max new tokens per answer; null: measured from the demonstrations (longest + 16). */
      maxTokens: positiveInt.nullable().default(null),
      /**
       * Sampling temperature of the rollouts. RL trains the policy that sampled them,
       * softmax(logits / temperature), and the KL compares it with the reference at the same
       * temperature (trainer-loss.ts); greedy evaluation is the same argmax at any temperature.
       */
      temperature: z.number().gt(0).max(10).default(1),
      /**
       * Answers drawn at each decision of a dense env, the first played and the others scored beside
       * it by the env's exact action values (agent/episode.ts); what `advantage.estimator` 'dense'
       * compares. null: 1.
       */
      decisionSamples: z.number().int().min(1).max(64).nullable().default(null),
    })
    .prefault({}),
  advantage: advantageConfigSchema.prefault({ estimator: 'grpo', dropZeroVariance: true }),
  /**
   * The k3 KL to the warm start, β 1 by default (annealed, below). Measured on Blackjack's default
   * model (G 16 × 8, an earlier build): without it (or at β 0.3) the answer's shared bias drifts to
   * the action that is better on average (stick) faster than the model learns to read the state, the
   * policy turns deterministic (P(stick) 0.99 in every state by step 150), every group ties and
   * learning stops; at β 1 it stays near the warm start's 50/50 while the state dependence grows
   * (low sums hit, 19-21 stick by step 50). The estimator stays k3 (`loss.klEstimator`): k2, whose
   * gradient is the reverse KL's, handed over −0.0734 / −0.0762 on seeds 0 / 2 against k3's
   * −0.0693 / −0.0707 (docs/results.md).
   */
  loss: lossConfigSchema
    // The default lives in the field, so a config that sets other loss fields keeps it.
    .extend({
      klBeta: z.number().min(0, 'must be ≥ 0').default(1),
      /**
       * β at the last step as a share of klBeta; β moves linearly from klBeta at step 1 (0, the
       * default: to nothing at the end; 1: constant). The KL holds the policy soft, and a soft policy
       * plays the hands after a hit badly, so hitting looks worse than it is: the tabular control
       * (bench/tabular-blackjack.ts, the same rollouts, advantages, loss and AdamW on a 280-state
       * table, 64,000 episodes, seeds 0–2) hands over a greedy table at −0.135 / −0.110 / −0.114 with
       * β 1 throughout, −0.069 / −0.075 / −0.075 with β 1 annealed to 0 and −0.055 without a KL. On
       * the default model (250 steps, seeds 0–3) constant β 1 handed over −0.0815 / −0.0736 / −0.0700 /
       * −0.0716, annealed to 0 −0.0679 / −0.0634 / −0.0790 / −0.0740: mixed, mean −0.0711 against
       * −0.0742 (seed 1 with 0.3 annealed to 0: −0.0619). The early KL is what keeps the answer's shared bias from drifting to
       * stick before the model reads the state (klBeta above); the policy RL hands over is the weight
       * average, taken while β is low.
       */
      klBetaEndRatio: z.number().min(0, 'must be ≥ 0').max(1, 'must be ≤ 1').default(0),
      /**
       * The share of the RL steps over which β moves to klBeta × klBetaEndRatio, and stays there
       * after (1, the default: the whole run). The tabular control at β 1 → 0 over the first 40 %
       * hands over −0.056 / −0.059 / −0.060 (seeds 0–2, 64,000 episodes) against the full anneal's
       * −0.069 / −0.075 / −0.075, but the default model does not take it: at 0.4, seed 3 turned to
       * always-stick by step 80 (β 0.2; every group tied from step 115, nothing left to learn from,
       * −0.1864) and seed 0 handed over −0.0816 (the full anneal: −0.0773, −0.0719); at 0.7, seeds 0–3
       * handed over −0.0649 / −0.0647 / −0.0762 / −0.0712 (the full anneal: −0.0693 / −0.0664 / −0.0707 /
       * −0.0749), within the seeds' spread.
       */
      klBetaAnnealShare: klBetaAnnealShareSchema,
      /**
       * Every this many RL steps the KL's reference becomes the current RL weights (ProRL's reference
       * reset, Liu et al. 2025); null: the warm start throughout. With β·KL a fixed reference caps each
       * state's logit gap (at about ΔA/β with `klEstimator` k2, lower with k3: loss-kl.ts); a reset lets
       * the gap grow again, while each period still holds the policy near where it was.
       * Measured on Blackjack (defaults, N = 50, seeds 1 and 2): the gaps grew (P(stick) 0.97–0.99 on
       * 17–21 by step 250, 0.84–0.92 at step 100) but the dealer-dependent hard 12–16 stayed mixed,
       * and the handed-over policy scored −0.0691 / −0.0767 exact, no better than without; so off.
       */
      referenceResetEvery: z.number().int().min(1, 'must be ≥ 1').nullable().default(null),
    })
    .prefault({}),
  /**
   * RL's AdamW. Its schedule (warmupSteps, cosine decay to minLrRatio × lr at totalSteps) counts RL
   * steps, not optimiser updates (a step makes as many updates as its samples fill); totalSteps
   * defaults to `steps`. Measured on Blackjack (seed 1, 150 steps, G 8 × 32): lr 2e-3 collapsed to
   * one action at step 19 (every group tied, nothing left to train on); 1e-3 kept the format, and the
   * decay to 0.1 × lr keeps the last steps' noise from flipping the greedy table's close states.
   */
  optimizer: optimizerSchema
    // Defaults in the fields, so a config (or --lr) that sets some fields keeps the others.
    .extend({
      lr: z.number().positive().default(1e-3),
      warmupSteps: z.number().int().min(0).default(10),
      decay: z.enum(['constant', 'cosine']).default('cosine'),
      minLrRatio: z.number().min(0).max(1).default(0.1),
    })
    .prefault({}),
  /**
   * RL trains LoRA adapters (W + scale · B A on each target projection, B starting at 0) over the
   * weights RL starts from (the warm start, or the weights named by --warm-start / --init-from),
   * which stay frozen and are the KL's reference; null (the default): every weight. The policy
   * samples with the adapters merged, and the checkpoints' model weights are merged too (a weight
   * average of LoRA steps is no longer of rank r); the adapters and their optimiser moments are
   * kept beside them for --resume.
   */
  lora: loraConfigSchema,
  /**
   * The policy a run hands over (its final evaluation, the checkpoints' model weights from then on)
   * is the mean of the RL weights after each step from step ⌊from × steps⌋ to the end
   * (weight-average.ts); RL itself continues from the last step's weights. null: the last step's
   * weights. 0.6, measured on Blackjack (seeds 1–3 of the defaults, exact return of the greedy
   * table): the mean of the step-150, 200 and 250 checkpoints beat the step-250 weights on every
   * seed (−0.0657 / −0.0637 / −0.0678 against −0.0665 / −0.0830 / −0.0747); the mean of every step
   * from 150 to 250 scored −0.0670 / −0.0701 / −0.0697: it mostly guards against a bad last step.
   */
  weightAverage: z
    .strictObject({
      from: z.number().min(0, 'must be ≥ 0').max(1, 'must be ≤ 1').nullable().default(0.6),
    })
    .prefault({}),
  /**
   * Choosing the policy a run hands over by its greedy return on `episodes` validation seeds, a
   * block apart from the evaluation's (handover-select.ts): the candidates are the weight average
   * and RL's own weights at each checkpoint from step ⌊from × steps⌋ on (so checkpointEvery sets how
   * many). null (the default): the weight average, else the last step's weights, unjudged. On the
   * bandit (seeds 3–9, docs/results.md "Bandit") the choice on 300 seeds scored 0.81 normalised on
   * average, on 1,000 seeds 0.89, where the average scored 0.74: 300 seeds do not separate
   * candidates within about 0.1 in return.
   */
  select: z
    .strictObject({
      episodes: positiveInt.nullable().default(null),
      from: z.number().min(0, 'must be ≥ 0').max(1, 'must be ≤ 1').default(0.6),
    })
    .prefault({}),
  samples: samplesConfigSchema.prefault({}),
  update: z
    .strictObject({
      /**
       * Parts the rollout batch is split into in each epoch; each part takes as many optimiser
       * updates as it fills layouts of `rows` rows. 1 (the default): a fixed token budget per update,
       * the step's number of updates following its number of distinct samples.
       */
      miniBatches: positiveInt.default(1),
      /** Passes over each rollout batch; above 1 the ratio leaves 1 and the clip acts. */
      epochs: positiveInt.default(1),
      /**
       * true: a mini-batch's updates add their gradients, and their mean makes one optimiser update
       * (gradient accumulation, as TRL's and verl's mini-batches); false: each fills its own update.
       * A dense step of a ten-turn env fills 20–35 updates of 2–4 rows (hmm: 640 answers of 8 × 10
       * decisions), each an Adam step of about lr whatever its gradient's size, where a Blackjack step
       * fills 2; so the dense preset accumulates (train-presets.ts).
       */
      accumulate: z.boolean().default(false),
      /**
       * The batch shape of the run (rl-batch.ts): rows × rowLength positions behind the shared
       * prefix per optimiser update. A mini-batch that needs more rows takes several updates; a
       * sequence longer than a row is left out (counted). Also bounds the attention's memory. null:
       * as many rows as 2,048 positions fill (rl-batch.ts TOKENS_PER_LAYOUT; 16 rows of 128).
       */
      rows: z.number().int().min(1).max(1024).nullable().default(null),
      /**
       * A mini-batch's last update takes only the rows it fills, rounded up to this; null: every
       * update has `rows` rows. Fewer rows cost less time (before identical samples were merged, 2
       * updates a Blackjack step filled 44 % of 32 rows), but each row count is a shape with its own compiled code and buffers in Wasm's
       * 4 GiB, which is never returned: 32 rows in steps of 8 ran out of memory at step 30, and 16
       * rows in steps of 8 with 224-token rows reached 4.1 GB resident, and that run's final
       * evaluation lost every warm-start episode (cause not recorded; memory is likely). So the
       * default is one shape.
       */
      rowMultiple: z.number().int().min(1).max(1024).nullable().default(null),
      /**
       * Row length; null: measured from the warm start's demonstrations (row-length.ts: 99 % of
       * episodes fit a row), which multi-turn envs need (a 10-pull bandit episode is ~650 tokens)
       * at a memory cost (see rowMultiple). 128 holds Blackjack's RL samples (2.6 % left out).
       */
      rowLength: z.number().int().min(16).max(8192).nullable().default(128),
      /**
       * Samples whose prompts are one conversation's share it in a row: a later decision's prompt
       * holds the earlier ones', so the decisions of an episode compute its text once, each seeing it
       * up to its own prompt (rl-batch.ts). false: only samples with the same prompt share it (a dense
       * decision's answers, a group's first answers). Off by default: on a 40-step kelly warm start
       * it cut the layouts of a step from 28 to 25 and the training time by ~10 %; the
       * ten-turn envs' longer conversations are unmeasured.
       */
      shareConversations: z.boolean().default(false),
    })
    .prefault({}),
  rollout: z
    .strictObject({
      /** Episodes in flight at once. */
      concurrency: positiveInt.default(512),
      /** Sampler rows per decode batch. */
      maxBatchRows: positiveInt.default(256),
    })
    .prefault({}),
  /**
   * How the env's report questions (forecasts answered beside the action, `--env-opt report=true`)
   * are learned. `reward`: through the `forecast` reward part (proper scoring rules), with the env's
   * `reportWeight`. `supervised`: by likelihood of the oracle's answers (report-sft-samples.ts), with
   * weight `weight` beside the RL loss; the `forecast` part then gets weight 0 in the RL reward (it
   * is still recorded), so the oracle's target never reaches the action's advantage.
   */
  report: z
    .strictObject({
      mode: z.enum(['reward', 'supervised']).default('reward'),
      weight: z.number().min(0, 'must be ≥ 0').max(1000, 'must be ≤ 1000').default(1),
    })
    .prefault({}),
  /**
   * Supervised samples on the answer's format tokens (those every legal action's answer shares),
   * added to a step whose rollouts answered illegally more often than `invalidRate`
   * (format-anchor.ts): one update can make every answer malformed, after which no group has a
   * reward difference to learn from. With report.mode 'supervised' they share report.weight.
   */
  formatAnchor: formatAnchorSchema.prefault({}),
  /** Trajectories stored per step (the first groups'); 0: none. */
  saveTrajectoriesPerStep: z.number().int().min(0).default(4),
});

export type TrainConfig = z.input<typeof trainConfigSchema>;
export type TrainSettings = z.output<typeof trainConfigSchema>;

/** Flags of `spindle train`, each overriding its config field. */
export interface TrainFlagOverrides {
  steps?: number;
  seed?: number;
  groupSize?: number;
  batchSeeds?: number;
  lr?: number;
  evalEvery?: number;
  checkpointEvery?: number;
  threads?: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The file's object with the flags written over it (flags win). */
export function applyFlagOverrides(file: unknown, flags: TrainFlagOverrides): Record<string, unknown> {
  if (file !== undefined && !isObject(file)) throw new UsageError('train config: must be a JSON object');
  const out: Record<string, unknown> = { ...(file ?? {}) };
  const top = ['steps', 'seed', 'groupSize', 'batchSeeds', 'evalEvery', 'checkpointEvery', 'threads'] as const;
  for (const key of top) if (flags[key] !== undefined) out[key] = flags[key];
  if (flags.lr !== undefined) {
    const optimizer = out.optimizer;
    if (optimizer !== undefined && !isObject(optimizer)) throw new UsageError('train.optimizer: must be an object');
    out.optimizer = { ...(optimizer ?? {}), lr: flags.lr };
  }
  return out;
}

/**
 * `config` written over `preset` field by field (nested objects merged, anything else replaced):
 * an env's train preset under the user's config and flags.
 */
export function mergeTrainConfig(preset: Record<string, unknown>, config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...preset };
  for (const [key, value] of Object.entries(config)) {
    const under = out[key];
    out[key] = isObject(under) && isObject(value) ? mergeTrainConfig(under, value) : value;
  }
  return out;
}

/** Validates a config (defaults filled); a bad field is a UsageError naming `train.<field>`. */
export function parseTrainConfig(config: unknown): TrainSettings {
  const parsed = trainConfigSchema.safeParse(config ?? {});
  if (!parsed.success) throw new UsageError(`train config: ${describeZodError(parsed.error, 'train')}`);
  const c = parsed.data;
  // RL's schedule counts RL steps: a cosine decay ends with the run unless told otherwise.
  if (c.optimizer.decay === 'cosine' && c.optimizer.totalSteps === undefined) c.optimizer.totalSteps = Math.max(1, c.steps);
  // Cross-field checks of the parts.
  if (c.advantage.estimator === 'dense' && (c.episode.decisionSamples ?? 1) < 2) {
    throw new UsageError('train config: train.episode.decisionSamples: the dense estimator compares the samples of a decision, so it needs at least 2');
  }
  parseLossConfig(rlLossConfig(c.loss), 'train.loss');
  parseAdamWConfig(c.optimizer, 'train.optimizer');
  parseAdamWConfig(c.warmStart.optimizer, 'train.warmStart.optimizer');
  return c;
}

/** The loss fields the loss itself reads (the schedule is the trainer's). */
export function rlLossConfig(
  loss: TrainSettings['loss'],
): Omit<TrainSettings['loss'], 'klBetaEndRatio' | 'klBetaAnnealShare' | 'referenceResetEvery'> {
  const { klBetaEndRatio: _ratio, klBetaAnnealShare: _share, referenceResetEvery: _reset, ...rest } = loss;
  return rest;
}

/** True when the reference is reset to the RL weights after RL step `step` (never after the last). */
export function resetsReferenceAfter(loss: TrainSettings['loss'], step: number, steps: number): boolean {
  const every = loss.referenceResetEvery;
  return loss.klBeta > 0 && every !== null && step % every === 0 && step < steps;
}

/** β of an RL step (1-based) under the run's schedule. */
export function klBetaAt(
  loss: Pick<TrainSettings['loss'], 'klBeta' | 'klBetaEndRatio' | 'klBetaAnnealShare'>,
  step: number,
  steps: number,
): number {
  const t = steps <= 1 ? 0 : Math.min(1, Math.max(0, (step - 1) / ((steps - 1) * loss.klBetaAnnealShare)));
  return loss.klBeta * (1 + (loss.klBetaEndRatio - 1) * t);
}

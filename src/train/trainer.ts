/**
 * The training run behind `spindle train`: the default model (tokenizer from the env's text, random
 * weights), the warm start (the action format from random demonstrations; checkpoint step 0), then
 * RL steps (trainer-step.ts) with an evaluation every N steps and a checkpoint every M, all metrics
 * in the store. A run resumed from a checkpoint continues exactly where it stopped: with the same
 * seed and one thread it logs the same metrics as the run that was never interrupted.
 */
import { join } from 'node:path';
import { actionValuesFromJson, actionValuesToJson, type ActionValueTable } from '../advantage/critic.ts';
import { UsageError } from '../core/errors.ts';
import type { Trajectory } from '../core/trajectory.ts';
import { nowIso } from '../core/ids.ts';
import type { EnvSpec } from '../envs/env.ts';
import { tree } from '../model/engine.ts';
import type { LossFn } from '../model/param-trainer.ts';
import { initLora, type LoraConfig } from '../model/lora.ts';
import { checkedAdapters } from '../model/lora-io.ts';
import { toHostParams, toParams, type HostParams, type Params } from '../model/params.ts';
import type { EmbeddedPolicy } from '../policy/embedded.ts';
import type { Policy } from '../policy/policy.ts';
import type { Store } from '../store/store.ts';
import { AdamW, type AdamWOptions } from '../model/adamw.ts';
import { rewardsForReportMode } from '../rewards/report-mode.ts';
import {
  checkpointPath,
  LORA_ADAPTERS_FILE,
  loadModelFolder,
  loadRlWeights,
  REFERENCE_WEIGHTS_FILE,
  RL_WEIGHTS_FILE,
  saveModelFolder,
  saveTrainCheckpoint,
  type TrainCheckpoint,
} from './checkpoint-io.ts';
import { createDefaultModel, type ModelAssets } from './default-model.ts';
import { parseLossConfig } from './loss-config.ts';
import { LayoutShapes } from './rl-batch.ts';
import { trainedLora } from './lora-config.ts';
import { RlWeights } from './rl-weights.ts';
import { resetsReferenceAfter, rlLossConfig, type TrainSettings } from './train-config.ts';
import { evalMetrics, periodicEval, type PeriodicEval } from './trainer-eval.ts';
import { frozenLogprobs, rlLoss, type RlStepInputs } from './trainer-loss.ts';
import { trainerPolicy } from './trainer-policy.ts';
import { finiteMetrics } from './trainer-metrics.ts';
import { TRAINER_STATE_FORMAT, type HandOverSelection, type TrainerState, type ValidatedCandidate, type WarmStartSummary } from './trainer-state.ts';
import { FormatAnchor } from './format-anchor.ts';
import { rlStep, type RlStepContext } from './trainer-step.ts';
import { warmStart, type WarmStartCheck } from './warm-start.ts';
import { reusedSummary, saveWarmStartRecord, type WarmStartSource } from './warm-start-reuse.ts';
import { averageFirstStep, WeightAverage, type AveragedSteps } from './weight-average.ts';
import { earlierCandidateSteps, selectHandOver } from './handover-select.ts';

/** The row length runs had before it was measured (checkpoints that did not record one). */
const LEGACY_ROW_LENGTH = 128;

export type TrainEvent =
  | { type: 'phase'; phase: 'model' | 'warm-start' | 'rl' | 'select'; message: string }
  | { type: 'warm-start-step'; step: number; maxSteps: number; loss: number }
  | { type: 'warm-start-check'; check: WarmStartCheck }
  | { type: 'eval'; step: number; eval: PeriodicEval }
  | { type: 'step'; step: number; steps: number; metrics: Record<string, number>; episodes: number; wallSeconds: number }
  | { type: 'checkpoint'; step: number; path: string }
  | { type: 'select'; candidate: ValidatedCandidate; index: number; count: number; seconds: number };

export interface TrainRunInput<O extends Record<string, unknown>> {
  spec: EnvSpec<O>;
  options: O;
  settings: TrainSettings;
  store: Store;
  runId: string;
  /** A checkpoint of this run to continue from (checkpoint-io.ts loadTrainCheckpoint). */
  resume: TrainCheckpoint<TrainerState> | null;
  /** Another run's warm start or checkpoint to begin RL from instead of warm-starting (warm-start-reuse.ts); not with resume. */
  warmStartFrom?: WarmStartSource | null;
  /**
   * Which scripted policy plays the warm start's demonstrations (default: random); diagnostics only
   * (bench/oracle-imitation.ts), not a config field: a policy that prefers actions teaches them.
   */
  warmStartDemoPolicy?: Policy;
  onEvent?: (event: TrainEvent) => void;
}

export interface TrainOutcome {
  runId: string;
  runDir: string;
  steps: number;
  episodes: number;
  /** Every session of the run, model creation and warm start included. */
  wallSeconds: number;
  maxTurns: number;
  maxTokens: number;
  warmStart: WarmStartSummary | null;
  lastEval: PeriodicEval | null;
  /** The steps whose weights the trained policy averages (weight-average.ts); null: it is one step's weights. */
  weightAverage: AveragedSteps | null;
  /** How the trained policy was chosen on validation seeds (handover-select.ts); null: not chosen. */
  handOver: HandOverSelection | null;
  /** The trained policy (chosen, else the weight average, else the last step's weights); the caller closes it. */
  policy: EmbeddedPolicy;
  assets: ModelAssets;
  /** Folder of the last checkpoint, relative to the run folder. */
  lastCheckpoint: string;
}

/** The folder of the warm-started weights, relative to the run folder. */
export const WARM_START_PATH = 'warm-start';

/** Decisions per episode: the config's, else the env's own cap, else the agent loop's default. */
function resolveMaxTurns<O extends Record<string, unknown>>(spec: EnvSpec<O>, options: O, settings: TrainSettings): number {
  return settings.episode.maxTurns ?? spec.create(options).maxTurns ?? 32;
}

export async function trainRun<O extends Record<string, unknown>>(input: TrainRunInput<O>): Promise<TrainOutcome> {
  const start = performance.now();
  const { spec, options, settings, store, runId, resume } = input;
  const reused = input.warmStartFrom ?? null;
  if (resume && reused) throw new Error('trainRun: a resumed run keeps its own warm start (resume and warmStartFrom together)');
  const emit = input.onEvent ?? (() => undefined);
  const runDir = store.runDir(runId);
  const wallBefore = resume?.state.wallSeconds ?? 0;
  const wall = () => wallBefore + (performance.now() - start) / 1000;
  const history: Record<string, Record<string, number>> = resume ? structuredClone(resume.state.metrics) as Record<string, Record<string, number>> : {};
  const record = async (step: number, metrics: Record<string, number>) => {
    const kept = finiteMetrics(metrics);
    history[String(step)] = { ...history[String(step)], ...kept };
    await store.appendMetrics(Object.entries(kept).map(([name, value]) => ({ runId, step, name, value })));
  };
  const maxTurns = resolveMaxTurns(spec, options, settings);
  const lora = trainedLora(settings.lora, 'train.lora');
  if (settings.advantage.estimator === 'dense') checkDenseEnv(spec, options, settings);
  const shapes = new LayoutShapes({
    rows: settings.update.rows,
    rowMultiple: settings.update.rowMultiple ?? undefined,
    length: settings.update.rowLength,
    shareConversations: settings.update.shareConversations,
  });

  let assets: ModelAssets;
  let params: Params;
  let warm: WarmStartSummary | null;
  let maxTokens: number;
  let firstStep: number;
  let episodes: number;
  let lastEval: PeriodicEval | null = null;
  let average: WeightAverage | null = null;
  // The choice of the handed-over policy and its weights, made at the last step (handover-select.ts).
  let handOver: HandOverSelection | null = null;
  let handedOver: HostParams | null = null;
  // The KL's reference after a reset (host copy, for checkpoints) and the step whose weights it holds; null: the warm start.
  let referenceHost: HostParams | null = resume?.referenceParams ?? null;
  let referenceStep: number | null = resume?.state.reference?.step ?? null;
  const savedValues = resume?.state.actionValues;
  const actionValues: ActionValueTable = savedValues ? actionValuesFromJson(savedValues, `the checkpoint of step ${resume!.state.step}: actionValues`) : new Map();
  if (resume) {
    const restored = resume.state.weightAverage;
    if (restored && !resume.rlParams && !resume.averageParams) {
      throw new UsageError(`the checkpoint of step ${resume.state.step} averages weights but has no ${RL_WEIGHTS_FILE} (RL's own weights) to continue from`);
    }
    if (referenceStep !== null && !referenceHost) {
      throw new UsageError(`the checkpoint of step ${resume.state.step} has a reference reset at step ${referenceStep} but no ${REFERENCE_WEIGHTS_FILE}`);
    }
    // Checkpoints from before the answer budget was saved with the model get it from the run state.
    assets = { ...resume.assets, answerBudget: resume.state.maxTokens };
    params = toParams(resume.rlParams ?? resume.params);
    if (restored) average = new WeightAverage(restored.firstStep, { params: resume.averageParams ?? resume.params, count: restored.count });
    warm = resume.state.warmStart;
    maxTokens = resume.state.maxTokens;
    firstStep = resume.state.step + 1;
    episodes = resume.state.episodes;
    if (resume.state.prefixLength !== null) shapes.fixPrefix(resume.state.prefixLength);
    if (!shapes.lengthFixed) shapes.fixLength(resume.state.rowLength ?? LEGACY_ROW_LENGTH);
  } else if (reused) {
    assets = reused.assets;
    params = toParams(reused.params);
    firstStep = 1;
    episodes = 0;
    maxTokens = settings.episode.maxTokens ?? reused.record.maxTokens;
    assets = { ...assets, answerBudget: maxTokens };
    warm = null;
    if (!shapes.lengthFixed) shapes.fixLength(reused.record.rowLength);
  } else {
    emit({ type: 'phase', phase: 'model', message: `training the tokenizer on ${settings.model.corpusEpisodes} random ${spec.name} episodes` });
    const model = await createDefaultModel({ spec, options, seed: settings.seed, corpusEpisodes: settings.model.corpusEpisodes, shape: settings.model });
    const { cfg } = model.assets;
    emit({ type: 'phase', phase: 'model', message: `vocabulary ${cfg.vocabSize}, context ${cfg.maxPositionEmbeddings} tokens (the longest random episode: ${model.corpus.longestText})` });
    assets = model.assets;
    firstStep = 1;
    episodes = 0;
    maxTokens = settings.episode.maxTokens ?? 0;
    warm = null;
    params = toParams(model.params);
  }

  function initialState(step: number): TrainerState {
    return {
      format: TRAINER_STATE_FORMAT,
      runId,
      env: spec.name,
      envOptions: options,
      step,
      policyVersion: step,
      rng: { seed: settings.seed, nextStep: step + 1 },
      config: settings,
      maxTurns,
      maxTokens: Math.max(1, maxTokens),
      prefixLength: Number.isFinite(shapes.prefixLength) ? shapes.prefixLength : null,
      rowLength: shapes.lengthFixed ? shapes.length : null,
      episodes,
      wallSeconds: wall(),
      warmStart: warm,
      weightAverage: average && average.count > 0 ? { firstStep: average.firstStep, count: average.count } : null,
      reference: referenceStep !== null ? { step: referenceStep } : null,
      handOver,
      actionValues: settings.advantage.estimator === 'critic' ? actionValuesToJson(actionValues) : null,
      metrics: history,
    };
  }

  /**
   * LoRA over the weights RL started from (`params`): new adapters, or on --resume the checkpoint's,
   * over the run's warm-start folder (what its RL started from; `params` then holds the merged weights).
   */
  function loraWeights(config: LoraConfig, loss: LossFn<RlStepInputs>, optimizer: AdamW | AdamWOptions): RlWeights {
    if (!resume) return new RlWeights(assets.cfg, params, loss, optimizer, { config, adapters: initLora(assets.cfg, config, settings.seed) });
    const label = `the checkpoint of step ${resume.state.step}`;
    if (!resume.loraAdapters) throw new UsageError(`${label} has no ${LORA_ADAPTERS_FILE}, which train.lora continues from`);
    const adapters = checkedAdapters(resume.loraAdapters, assets.cfg, config, `${label}: ${LORA_ADAPTERS_FILE}`);
    tree.dispose(params);
    const base = toParams(loadModelFolder(join(runDir, warm?.path ?? WARM_START_PATH)).params);
    return new RlWeights(assets.cfg, base, loss, optimizer, { config, adapters: toParams(adapters) });
  }

  const policy = trainerPolicy(assets, params, {
    name: `run:${runId}`,
    modelId: runId,
    version: firstStep - 1,
    maxBatchRows: settings.rollout.maxBatchRows,
  });
  // The held-out evaluation (greedy); the next step's rollouts do not reuse its cached prompts (rlStep).
  const evaluate = (): Promise<PeriodicEval> =>
    periodicEval({ spec, options, policy, episodes: settings.evalEpisodes, maxTurns, maxTokens, concurrency: settings.rollout.concurrency });
  /** The policy to hand over, chosen on validation seeds among the weight average and RL's own weights at the late checkpoints. */
  async function chooseHandOver(episodes: number, step: number, last: HostParams, averaged: HostParams | null) {
    return selectHandOver({
      play: { spec, options, policy, maxTurns, maxTokens, concurrency: settings.rollout.concurrency },
      episodes,
      average: averaged,
      last: { step, params: last },
      earlierSteps: earlierCandidateSteps(settings.select.from, step, settings.checkpointEvery),
      loadEarlier: (earlier) => loadRlWeights(join(runDir, checkpointPath(earlier)), assets.cfg),
      onStart: (count) => emit({ type: 'phase', phase: 'select', message: `choosing the policy to hand over: ${count} candidates, each greedy on ${episodes} validation seeds` }),
      onCandidate: (candidate, index, total, seconds) => emit({ type: 'select', candidate, index, count: total, seconds }),
    });
  }
  try {
    if (reused) {
      const what = reused.from === reused.runId ? `the warm start of run ${reused.runId} (${reused.record.summary.steps} steps)` : `the checkpoint run:${reused.from}`;
      emit({ type: 'phase', phase: 'warm-start', message: `starting RL from ${what}; the KL's reference is the same weights` });
      const dir = join(runDir, WARM_START_PATH);
      saveModelFolder(dir, assets, reused.params);
      warm = reusedSummary(reused, WARM_START_PATH);
      saveWarmStartRecord(dir, { ...reused.record, runId, summary: warm });
      lastEval = await evaluate();
      await record(0, evalMetrics(lastEval));
      emit({ type: 'eval', step: 0, eval: lastEval });
    } else if (!resume) {
      const demoPolicy = input.warmStartDemoPolicy?.name ?? 'random';
      emit({ type: 'phase', phase: 'warm-start', message: `learning the action format from ${settings.warmStart.demoEpisodes} ${demoPolicy}-policy episodes` });
      const ws = await warmStart({
        spec,
        options,
        assets,
        params,
        policy,
        settings: settings.warmStart,
        runSeed: settings.seed,
        maxTurns,
        maxTokens: settings.episode.maxTokens,
        temperature: settings.episode.temperature,
        concurrency: settings.rollout.concurrency,
        // Its own layouts: a language-model warm start trains every token after the first, so it
        // shares no prefix, and RL's layouts must not inherit that (they share the system turn).
        shapes: new LayoutShapes({ rows: settings.update.rows, rowMultiple: settings.update.rowMultiple ?? undefined, length: settings.update.rowLength }),
        onStep: (step, maxSteps, loss) => emit({ type: 'warm-start-step', step, maxSteps, loss }),
        onCheck: (check) => emit({ type: 'warm-start-check', check }),
        demoPolicy: input.warmStartDemoPolicy,
      });
      params = ws.params;
      maxTokens = ws.maxTokens;
      assets = { ...assets, answerBudget: maxTokens };
      if (!shapes.lengthFixed) shapes.fixLength(ws.rlRowLength);
      const dir = join(runDir, WARM_START_PATH);
      saveModelFolder(dir, assets, await toHostParams(params));
      const last = ws.checks.at(-1);
      warm = {
        steps: ws.steps,
        answerSteps: ws.answerSteps,
        reached: ws.reached,
        invalidRate: last?.invalidRate ?? null,
        meanReturn: last && Number.isFinite(last.meanReturn) ? last.meanReturn : null,
        seconds: ws.wallMs / 1000,
        path: WARM_START_PATH,
        from: null,
      };
      saveWarmStartRecord(dir, { runId, env: spec.name, envOptions: options, maxTokens, rowLength: ws.rlRowLength, summary: warm });
      lastEval = await evaluate();
      // The warm start's own steps are not RL steps: its figures are logged at step 0.
      await record(0, {
        ...evalMetrics(lastEval),
        'warmstart/steps': ws.steps,
        'warmstart/answer_rounds': ws.answerRounds,
        'warmstart/seconds': ws.wallMs / 1000,
        'warmstart/final_loss': ws.losses.at(-1)?.loss ?? NaN,
        'warmstart/invalid_rate': last?.invalidRate ?? NaN,
        'warmstart/train_tokens': ws.trainTokens,
      });
      emit({ type: 'eval', step: 0, eval: lastEval });
    }
    if (!resume) {
      // Step 0 is the policy RL starts from (version 0, which samples step 1's rollouts), so
      // run:RUN@0, and run:RUN after --steps 0, name the warm start the step-0 evaluation scored.
      await store.saveCheckpoint({ runId, step: 0, path: WARM_START_PATH, policyVersion: 0, createdAt: nowIso(), metrics: lastEval ? finiteMetrics(evalMetrics(lastEval)) : {} });
    }

    // RL.
    const lossSettings = parseLossConfig(rlLossConfig(settings.loss), 'train.loss');
    const optimizer = resume?.optimizer ? AdamW.fromState(resume.optimizer) : settings.optimizer;
    const temperature = settings.episode.temperature;
    const loss = rlLoss(assets.cfg, lossSettings, { sftWeight: settings.report.mode === 'supervised' ? settings.report.weight : 1, temperature });
    const weights = lora ? loraWeights(lora, loss, optimizer) : new RlWeights(assets.cfg, params, loss, optimizer, null);
    let reference: RlStepContext<O>['reference'] = null;
    if (lossSettings.klBeta > 0) {
      const refParams = toParams(referenceHost ?? loadModelFolder(join(runDir, warm?.path ?? WARM_START_PATH)).params);
      reference = { params: refParams, forward: frozenLogprobs(assets.cfg, temperature) };
    }
    const ctx: RlStepContext<O> = {
      spec,
      options,
      rewards: rewardsForReportMode(spec.rewards?.(options), settings.report.mode),
      settings,
      assets,
      policy,
      weights,
      shapes,
      reference,
      maxTurns,
      maxTokens,
      runId,
      formatAnchor: new FormatAnchor({
        spec,
        options,
        assets,
        promptIds: (messages, tools) => policy.promptIds(messages, tools),
        maxTurns,
        runSeed: settings.seed,
        settings: settings.formatAnchor,
      }),
      actionValues,
      counts: { tooLong: 0 },
    };
    emit({ type: 'phase', phase: 'rl', message: `RL: ${settings.steps} steps of ${settings.batchSeeds} seeds x ${settings.groupSize} samples; updates of ${shapes.rows} rows x ${shapes.length} tokens` });
    let lastCheckpoint = resume ? '' : WARM_START_PATH;
    const averageFrom = averageFirstStep(settings.weightAverage.from, settings.steps);
    if (!average && averageFrom !== null) average = new WeightAverage(Math.max(averageFrom, firstStep));
    try {
      for (let step = firstStep; step <= settings.steps; step++) {
        const t0 = performance.now();
        const result = await rlStep(ctx, step);
        episodes += result.episodes;
        const averaging = average !== null && step >= average.firstStep;
        const resetting = reference !== null && resetsReferenceAfter(settings.loss, step, settings.steps);
        const snapshot =
          averaging || resetting || step % settings.checkpointEvery === 0 || step === settings.steps ? await weights.effectiveHost() : null;
        if (averaging) average!.add(snapshot!);
        const metrics: Record<string, number> = { ...result.metrics, 'episodes/total': episodes };
        // The reference this step's KL was taken to (0: the warm start).
        if (reference) metrics['kl/reference_step'] = referenceStep ?? 0;
        if (resetting) {
          // The next steps' KL is to these weights (train-config.ts loss.referenceResetEvery).
          tree.dispose(reference!.params);
          reference!.params = toParams(snapshot!);
          referenceHost = snapshot;
          referenceStep = step;
        }
        if (step % settings.evalEvery === 0 || step === settings.steps) {
          lastEval = await evaluate();
          Object.assign(metrics, evalMetrics(lastEval));
          emit({ type: 'eval', step, eval: lastEval });
        }
        await saveSome(store, result.trajectories, settings.saveTrajectoriesPerStep);
        const averaged = average?.params ?? null;
        if (step === settings.steps) {
          handedOver = averaged ?? snapshot!;
          if (settings.select.episodes !== null) {
            const t = performance.now();
            const chosen = await chooseHandOver(settings.select.episodes, step, snapshot!, averaged);
            handOver = chosen.selection;
            handedOver = chosen.params;
            metrics['time/select_s'] = (performance.now() - t) / 1000;
          }
        }
        if (step % settings.checkpointEvery === 0 || step === settings.steps) {
          const t1 = performance.now();
          metrics['time/step_s'] = (t1 - t0) / 1000;
          await record(step, metrics);
          const model = step === settings.steps ? handedOver! : (averaged ?? snapshot!);
          const state = initialState(step);
          lastCheckpoint = saveTrainCheckpoint(runDir, step, {
            assets,
            params: model,
            rlParams: model === snapshot ? null : snapshot,
            averageParams: averaged && model !== averaged ? averaged : null,
            referenceParams: referenceStep !== null ? referenceHost : null,
            loraAdapters: await weights.adapters(),
            optimizer: await weights.trainer.optimizer.state(),
            state,
          });
          await store.saveCheckpoint({ runId, step, path: lastCheckpoint, policyVersion: step, createdAt: nowIso(), metrics: finiteMetrics(metrics) });
          emit({ type: 'checkpoint', step, path: lastCheckpoint });
          await store.appendMetrics([{ runId, step, name: 'time/checkpoint_s', value: (performance.now() - t1) / 1000 }]);
        } else {
          metrics['time/step_s'] = (performance.now() - t0) / 1000;
          await record(step, metrics);
        }
        emit({ type: 'step', step, steps: settings.steps, metrics, episodes, wallSeconds: wall() });
      }
    } finally {
      weights.dispose();
      if (reference) tree.dispose(reference.params);
    }
    if (handedOver) {
      const handed = toParams(handedOver);
      policy.updateWeights(handed, settings.steps);
      tree.dispose(handed);
    }
    return {
      runId,
      runDir,
      steps: settings.steps,
      episodes,
      wallSeconds: wall(),
      maxTurns,
      maxTokens,
      warmStart: warm,
      lastEval,
      weightAverage:
        average?.params && (handOver === null || handOver.chosen === 'average') ? { firstStep: average.firstStep, lastStep: settings.steps, count: average.count } : null,
      handOver,
      policy,
      assets,
      lastCheckpoint,
    };
  } catch (error) {
    await policy.close();
    throw error;
  }
}

/**
 * The dense estimator needs an env that scores every legal action, and compares actions only: report
 * answers scored as a reward part would get no credit, so they must be trained supervised.
 */
function checkDenseEnv<O extends Record<string, unknown>>(spec: EnvSpec<O>, options: O, settings: TrainSettings): void {
  const env = spec.create(options);
  if (typeof env.actionRewards !== 'function') {
    throw new UsageError(`train.advantage.estimator: 'dense' needs an env that scores every legal action (actionRewards); '${spec.name}' does not`);
  }
  env.reset(settings.seed);
  if (settings.report.mode === 'reward' && (env.reportQuestions?.().length ?? 0) > 0) {
    throw new UsageError(
      `train.report.mode: 'dense' compares the actions of a decision, so the env's report questions would get no credit as a reward part; use "report": {"mode": "supervised"}`,
    );
  }
}

/** The first `count` trajectories of a step (its first groups), stored for inspection. */
async function saveSome(store: Store, trajectories: readonly Trajectory[], count: number): Promise<void> {
  if (count === 0 || trajectories.length === 0) return;
  await store.saveTrajectories(trajectories.slice(0, count));
}

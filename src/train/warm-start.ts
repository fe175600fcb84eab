/**
 * The warm start: before RL the model learns the action FORMAT and nothing more. Supervised
 * training (masked NLL on the completion, loss-sft.ts) on random-policy demonstrations rendered
 * exactly as rollouts present them (warm-start-demos.ts), until answers sampled on held-out seeds
 * are legal actions often enough (invalid rate below the target) or the step budget runs out.
 * Since the demonstrated actions are uniformly random, the warm-started policy plays about as well
 * as `random`: whatever RL gains later, it discovered itself.
 */
import { UsageError } from '../core/errors.ts';
import { Rng } from '../core/random.ts';
import type { EnvSpec } from '../envs/env.ts';
import { ParamTrainer } from '../model/param-trainer.ts';
import type { Params } from '../model/params.ts';
import type { EmbeddedPolicy } from '../policy/embedded.ts';
import { runRollouts } from '../rollout/rollouts.ts';
import type { ModelAssets } from './default-model.ts';
import { supervisedLoss } from './loss-sft.ts';
import type { LayoutShapes} from './rl-batch.ts';
import { type LayoutSample } from './rl-batch.ts';
import { rlLogprobs, rlTensors, type RlTensors } from './rl-batch-forward.ts';
import { measuredRowLengths } from './row-length.ts';
import type { TrainSettings } from './train-config.ts';
import { demoSeeds, formatCheckSeeds } from './trainer-seeds.ts';
import { answerGroup, callFits, demonstrationSamples, warmStartDemonstrations, type Demonstrations } from './warm-start-demos.ts';

export interface WarmStartCheck {
  step: number;
  /** Invalid answers per LLM call, sampled at the rollout temperature on held-out seeds. */
  invalidRate: number;
  meanReturn: number;
  /** Completions cut at max tokens, per call. */
  lengthRate: number;
  /** Episodes that failed (an env or policy error), with the first reason. */
  failed: number;
  failureReason: string | null;
}

export interface WarmStartRequest<O extends Record<string, unknown>> {
  spec: EnvSpec<O>;
  options: O;
  assets: ModelAssets;
  /** The weights to start from (taken). */
  params: Params;
  /** The run's sampling policy: renders the demonstrations' prompts and samples the checks (its weights are replaced). */
  policy: EmbeddedPolicy;
  settings: TrainSettings['warmStart'];
  runSeed: number;
  maxTurns: number;
  /** Max new tokens per answer; null: the longest demonstrated answer + 16. */
  maxTokens: number | null;
  temperature: number;
  concurrency: number;
  /** The run's batch shape (shared with RL, so both use one compiled shape and one set of buffers). */
  shapes: LayoutShapes;
  onStep?: (step: number, loss: number, shape: { rows: number; length: number; prefix: number; ms: number }) => void;
  onCheck?: (check: WarmStartCheck) => void;
}

export interface WarmStartResult {
  /** The warm-started weights (owned by the caller). */
  params: Params;
  /** Supervised steps, answerSteps included. */
  steps: number;
  /** Of those, the last ones on the answers alone (train-config.ts answerSteps). */
  answerSteps: number;
  /** Whether the last check met the target invalid rate. */
  reached: boolean;
  checks: WarmStartCheck[];
  losses: { step: number; loss: number }[];
  /** The answers' token budget the run uses from here on. */
  maxTokens: number;
  /** RL's row length measured from the demonstrations (positions behind the shared system turn). */
  rlRowLength: number;
  /**
   * `cutEpisodes`: episodes whose later calls did not fit a row (their first calls are trained);
   * `tooLong`: demonstrations left out, every time a batch held them, for not fitting a row.
   */
  demos: Omit<Demonstrations, 'episodeCalls' | 'languageModel'> & { samples: number; cutEpisodes: number; tooLong: number };
  /** Tokens computed by the training forward (shared prefix once per batch). */
  trainTokens: number;
  trainMs: number;
  checkMs: number;
  wallMs: number;
}

/** Tokens past the longest demonstration before an answer is cut (room for a longer legal answer). */
const MAX_TOKENS_SLACK = 16;

/** The format is learned when sampled answers are legal often enough, and the check itself ran. */
function formatLearned(check: WarmStartCheck, target: number): boolean {
  if (check.failed > 0) throw new Error(`warm start: ${check.failed} check episodes failed: ${check.failureReason}`);
  return check.invalidRate < target;
}

function sftLoss(cfg: ModelAssets['cfg']) {
  return (params: Params, b: RlTensors) => {
    const { logprobs } = rlLogprobs(cfg, params, b);
    b.advantages.dispose();
    b.samplingLogprobs.dispose();
    b.sequenceLengths.dispose();
    b.tokenWeights.dispose();
    return supervisedLoss(logprobs, b.mask);
  };
}

/**
 * Batches of `size` units (unit i's sequences from `unit(i)`, built when its batch is: possibly
 * none), over `count` units reshuffled on every pass (seeded).
 */
function* batches(count: number, size: number, seed: number, unit: (i: number) => LayoutSample[]): Generator<LayoutSample[]> {
  for (let pass = 0; ; pass++) {
    const rng = new Rng(seed, 0x5f7 + pass);
    const order = Array.from({ length: count }, (_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (let i = 0; i + size <= order.length || (i === 0 && order.length > 0); i += size) {
      yield order.slice(i, i + size).flatMap(unit);
    }
  }
}

export async function warmStart<O extends Record<string, unknown>>(request: WarmStartRequest<O>): Promise<WarmStartResult> {
  const start = performance.now();
  const { settings, assets, policy } = request;
  const demos = await warmStartDemonstrations({
    spec: request.spec,
    options: request.options,
    assets,
    promptIds: (messages, tools) => policy.promptIds(messages, tools),
    seeds: demoSeeds(request.runSeed, settings.demoEpisodes),
    maxTurns: request.maxTurns,
    languageModel: settings.languageModel,
  });
  const maxTokens = request.maxTokens ?? demos.maxCompletionTokens + MAX_TOKENS_SLACK;
  const whole = demonstrationSamples(demos);
  const rowLengths = measuredRowLengths(whole, assets.cfg.maxPositionEmbeddings);
  if (!request.shapes.lengthFixed) request.shapes.fixLength(rowLengths.warmStart);
  // Episodes longer than a row are cut at a call boundary, not left out (warm-start-demos.ts: leaving
  // them out biases the demonstrated actions).
  const fitting = request.shapes.fittingTokens(whole);
  const samples = demonstrationSamples(demos, fitting);
  const cutEpisodes = demos.episodeCalls.filter((calls) => !calls.every((c) => callFits(c, fitting))).length;
  // A row that holds no demonstration would leave every batch empty (and the loop below spinning).
  if (samples.length === 0) {
    const shortest = Math.min(...whole.map((s) => s.tokens.length - 1));
    throw new UsageError(`train.update.rowLength: ${request.shapes.length} holds none of the warm start's demonstrations (the shortest needs ${shortest}); raise it or leave it null to measure it`);
  }
  let trainer = new ParamTrainer<RlTensors>(request.params, sftLoss(assets.cfg), settings.optimizer);
  const { shapes } = request;
  const checks: WarmStartCheck[] = [];
  const losses: { step: number; loss: number }[] = [];
  let trainTokens = 0;
  let tooLongDemos = 0;
  let trainMs = 0;
  let checkMs = 0;

  const check = async (step: number): Promise<WarmStartCheck> => {
    const t0 = performance.now();
    policy.updateWeights(trainer.params, 0);
    let lengthFinishes = 0;
    let failureReason: string | null = null;
    const { summary } = await runRollouts({
      spec: request.spec,
      options: request.options,
      policy,
      seeds: formatCheckSeeds(settings.checkEpisodes),
      concurrency: request.concurrency,
      episode: { maxTurns: request.maxTurns, maxTokens, temperature: request.temperature },
      keepTrajectories: false,
      onTrajectory: (t) => {
        lengthFinishes += t.metrics.lengthFinishes ?? 0;
        if (t.status === 'failed') failureReason ??= t.statusReason;
      },
    });
    const result: WarmStartCheck = {
      step,
      invalidRate: summary.invalidActionRate,
      meanReturn: summary.meanReturn.mean,
      lengthRate: summary.llmCalls > 0 ? lengthFinishes / summary.llmCalls : 0,
      failed: summary.episodes.failed,
      failureReason,
    };
    checkMs += performance.now() - t0;
    checks.push(result);
    request.onCheck?.(result);
    return result;
  };

  let steps = 0;
  let answerSteps = 0;
  let reached = false;
  /** One optimiser update per layout a batch fills; `after` runs after each (true: stop the batch). */
  const train = async (batch: LayoutSample[], after: () => Promise<boolean>) => {
    const { layouts, tooLong } = shapes.layouts(batch);
    tooLongDemos += tooLong;
    for (const layout of layouts) {
      const t0 = performance.now();
      const result = await trainer.step(rlTensors(assets.cfg, layout));
      steps++;
      trainTokens += layout.computedTokens;
      trainMs += performance.now() - t0;
      losses.push({ step: steps, loss: result.loss });
      request.onStep?.(steps, result.loss, { rows: layout.rows, length: layout.length, prefix: layout.prefix.length, ms: performance.now() - t0 });
      if (await after()) return;
    }
  };
  try {
    const source = batches(samples.length, Math.min(settings.batchSize, samples.length), request.runSeed, (i) => [samples[i]]);
    while (steps < settings.maxSteps && !reached) {
      await train(source.next().value!, async () => {
        if ((steps % settings.checkEvery === 0 && steps >= settings.minSteps) || steps === settings.maxSteps) {
          reached = formatLearned(await check(steps), settings.targetInvalidRate);
          return reached || steps === settings.maxSteps;
        }
        return false;
      });
    }
    if (steps === 0) reached = formatLearned(await check(0), settings.targetInvalidRate);
    // The actions' balance, re-set on every legal action's answer side by side (train-config.ts answerSteps).
    const decisions = settings.answerSteps > 0 && steps > 0 ? demos.episodeCalls.flat().filter((c) => c.otherCompletionIds) : [];
    if (decisions.length > 0) {
      // A fresh optimiser: the main phase's moments and learning rate would swing the balance (measured).
      trainer = new ParamTrainer<RlTensors>(trainer.release(), sftLoss(assets.cfg), {
        ...settings.optimizer,
        lr: settings.answerLr,
        warmupSteps: Math.min(5, settings.answerSteps),
        decay: 'cosine',
        totalSteps: settings.answerSteps,
        minLrRatio: 0,
      });
      const size = Math.min(settings.batchSize, decisions.length);
      const answers = batches(decisions.length, size, request.runSeed + 1, (i) => answerGroup(decisions[i], fitting) ?? []);
      const start = steps;
      const end = steps + settings.answerSteps;
      // A batch none of whose groups fits a row trains nothing; a whole pass of such batches ends the phase.
      for (let empty = 0; steps < end && empty < Math.ceil(decisions.length / size); ) {
        const batch = answers.next().value!;
        empty = batch.length === 0 ? empty + 1 : 0;
        if (batch.length > 0) await train(batch, async () => steps >= end);
      }
      answerSteps = steps - start;
    }
  } catch (error) {
    trainer.dispose();
    throw error;
  }
  const params = trainer.release();
  policy.updateWeights(params, 0);
  const { episodeCalls: _calls, languageModel: _languageModel, ...demoStats } = demos;
  return {
    params,
    steps,
    answerSteps,
    reached,
    checks,
    losses,
    maxTokens,
    rlRowLength: rowLengths.rl,
    demos: { ...demoStats, samples: samples.length, cutEpisodes, tooLong: tooLongDemos },
    trainTokens,
    trainMs,
    checkMs,
    wallMs: performance.now() - start,
  };
}

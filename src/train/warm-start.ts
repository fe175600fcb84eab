/**
 * The warm start: before RL the model learns the action FORMAT and nothing more. Supervised
 * training (masked NLL on the completion, loss-sft.ts) on random-policy demonstrations rendered
 * exactly as rollouts present them (warm-start-demos.ts), then a few steps on every legal action's
 * answer side by side, until answers sampled on held-out seeds with the weights it would hand over
 * are legal actions often enough (invalid rate below the target) or the step budget runs out.
 * Since the demonstrated actions are uniformly random, the warm-started policy plays about as well
 * as `random`: whatever RL gains later, it discovered itself.
 */
import { UsageError } from '../core/errors.ts';
import { Rng } from '../core/random.ts';
import type { EnvSpec } from '../envs/env.ts';
import { tree } from '../model/engine.ts';
import { ParamTrainer } from '../model/param-trainer.ts';
import type { Params } from '../model/params.ts';
import type { EmbeddedPolicy } from '../policy/embedded.ts';
import type { Policy } from '../policy/policy.ts';
import { runRollouts } from '../rollout/rollouts.ts';
import type { ModelAssets } from './default-model.ts';
import { supervisedLoss } from './loss-sft.ts';
import type { LayoutSample, LayoutShapes, RlLayout } from './rl-batch.ts';
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
  /** After each optimiser update of every phase: its number, a bound on their count, its loss. */
  onStep?: (step: number, maxSteps: number, loss: number) => void;
  onCheck?: (check: WarmStartCheck) => void;
  /** Which scripted policy plays the demonstrations (warm-start-demos.ts DemoRequest.demoPolicy); default random. */
  demoPolicy?: Policy;
}

export interface WarmStartResult {
  /** The warm-started weights (owned by the caller). */
  params: Params;
  /** Supervised steps, answerSteps included. */
  steps: number;
  /** Of those, the last ones on the answers alone (train-config.ts answerSteps). */
  answerSteps: number;
  /** Answers-only rounds run: 1, or 2 when the first one's format check failed (it was discarded). */
  answerRounds: number;
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
    refusals: settings.refusals,
    demoPolicy: request.demoPolicy,
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
  const trainer = new ParamTrainer<RlTensors>(request.params, sftLoss(assets.cfg), settings.optimizer);
  const { shapes } = request;
  const checks: WarmStartCheck[] = [];
  const losses: { step: number; loss: number }[] = [];
  let trainTokens = 0;
  let tooLongDemos = 0;
  let trainMs = 0;
  let checkMs = 0;

  /** Samples episodes on held-out seeds with `weights` (borrowed), after `step` supervised steps. */
  const check = async (step: number, weights: Params): Promise<WarmStartCheck> => {
    const t0 = performance.now();
    policy.updateWeights(weights, 0);
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

  /** Optimiser updates so far, of every phase (a discarded answers-only round's too). */
  let updates = 0;
  let answerRounds = 0;
  let reached: boolean;
  /** The layouts the batches fill, one update each; it ends after a whole pass of batches that fill none. */
  function* layoutsOf(source: Generator<LayoutSample[]>, batchesPerPass: number): Generator<RlLayout> {
    for (let empty = 0; empty < batchesPerPass; ) {
      const { layouts, tooLong } = shapes.layouts(source.next().value!);
      tooLongDemos += tooLong;
      empty = layouts.length === 0 ? empty + 1 : 0;
      yield* layouts;
    }
  }
  /** `count` updates of `on` (fewer if `layouts` ends), each loss logged at `firstStep` on; returns how many ran. */
  const train = async (on: ParamTrainer<RlTensors>, layouts: Iterator<RlLayout>, count: number, log: { step: number; loss: number }[], firstStep: number) => {
    let done = 0;
    while (done < count) {
      const next = layouts.next();
      if (next.done) break;
      const layout = next.value;
      const t0 = performance.now();
      const result = await on.step(rlTensors(assets.cfg, layout));
      updates++;
      trainTokens += layout.computedTokens;
      trainMs += performance.now() - t0;
      log.push({ step: firstStep + done, loss: result.loss });
      request.onStep?.(updates, maxUpdates, result.loss);
      done++;
    }
    return done;
  };
  // The decisions whose every legal answer can be demonstrated side by side (train-config.ts answerSteps).
  const decisions = settings.answerSteps > 0 ? demos.episodeCalls.flat().filter((c) => c.otherCompletionIds) : [];
  // At most two answers-only rounds run (below): the first check's, then the one handed over.
  const maxUpdates = settings.maxSteps + (decisions.length > 0 ? 2 * settings.answerSteps : 0);
  /**
   * The answers' balance re-set on every legal action's answer side by side (train-config.ts
   * answerSteps), on `from` with a fresh optimiser: the main phase's moments and learning rate
   * would swing the balance (measured).
   */
  const answerPhase = async (from: Params, firstStep: number) => {
    const phase = new ParamTrainer<RlTensors>(from, sftLoss(assets.cfg), {
      ...settings.optimizer,
      lr: settings.answerLr,
      warmupSteps: Math.min(5, settings.answerSteps),
      decay: 'cosine',
      totalSteps: settings.answerSteps,
      minLrRatio: 0,
    });
    const size = Math.min(settings.batchSize, decisions.length);
    const answers = batches(decisions.length, size, request.runSeed + 1, (i) => answerGroup(decisions[i], fitting) ?? []);
    const log: { step: number; loss: number }[] = [];
    try {
      const steps = await train(phase, layoutsOf(answers, Math.ceil(decisions.length / size)), settings.answerSteps, log, firstStep);
      return { trainer: phase, steps, losses: log };
    } catch (error) {
      phase.dispose();
      throw error;
    }
  };
  let lmSteps = 0;
  let answerSteps = 0;
  /** The answers-only round while its check runs, then the one handed over (if any). */
  let round: Awaited<ReturnType<typeof answerPhase>> | null = null;
  try {
    const main = layoutsOf(batches(samples.length, Math.min(settings.batchSize, samples.length), request.runSeed, (i) => [samples[i]]), Infinity);
    // The format is checked on the weights the warm start would hand over, after the answers-only
    // steps, which teach the format too: on Blackjack (seed 0) the sampled answers of the language-
    // model phase's own weights were 2–7 % refused at every check up to its 400-step budget, and
    // 0 % after those steps. If that first check fails, the language-model phase goes on from its
    // own weights and optimiser (kept aside) with its checks on those weights, as a round costs
    // answerSteps updates (an env whose answers stay refusable, like Nim's counts, would pay one at
    // every check), until one passes or the budget runs out; then a last round, checked for the record.
    let target = Math.min(settings.maxSteps, Math.max(settings.checkEvery, Math.ceil(settings.minSteps / settings.checkEvery) * settings.checkEvery));
    let first = true;
    for (;; first = false, target = Math.min(settings.maxSteps, target + settings.checkEvery)) {
      lmSteps += await train(trainer, main, target - lmSteps, losses, lmSteps + 1);
      const last = lmSteps >= settings.maxSteps;
      const withAnswers = lmSteps > 0 && decisions.length > 0;
      if (withAnswers && !first && !last && !formatLearned(await check(lmSteps, trainer.params), settings.targetInvalidRate)) continue;
      round = withAnswers ? await answerPhase(tree.ref(trainer.params), lmSteps + 1) : null;
      if (round) answerRounds++;
      reached = formatLearned(await check(lmSteps + (round?.steps ?? 0), (round?.trainer ?? trainer).params), settings.targetInvalidRate);
      if (reached || last || (withAnswers && !first)) {
        if (round) {
          losses.push(...round.losses);
          answerSteps = round.steps;
        }
        break;
      }
      round?.trainer.dispose();
      round = null;
    }
  } catch (error) {
    trainer.dispose();
    round?.trainer.dispose();
    throw error;
  }
  let params: Params;
  if (round) {
    trainer.dispose();
    params = round.trainer.release();
  } else params = trainer.release();
  policy.updateWeights(params, 0);
  const { episodeCalls: _calls, languageModel: _languageModel, ...demoStats } = demos;
  return {
    params,
    steps: lmSteps + answerSteps,
    answerSteps,
    answerRounds,
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

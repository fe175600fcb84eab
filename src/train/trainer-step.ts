/**
 * One RL step: rollouts of the current policy (G samples per seed, B seeds) → rewards (the env's
 * parts and the run's reward functions, recorded per turn by the agent loop) → groups →
 * advantages (computeAdvantages; the episode's advantage goes to every decision it made) →
 * training samples (buildSamples: exactly the sampled ids, per turn, packed per conversation;
 * identical ones trained once with their count as weight, samples-merge.ts) → optimiser steps
 * (mini-batches, epochs) → the new weights are published to the policy. Groups that tie are dropped
 * (advantage 0), but under samples.invalidAnswers 'penalize' their refused answers still train at
 * the penalty, for episodes as for dense decisions. Under the dense estimator each decision's
 * answers form its group, with `advantage.explore` also legal actions none of them took
 * (explored-answers.ts). With `report.mode`
 * 'supervised', the oracle's report answers of every usable trajectory (not only the groups that
 * have advantages: a supervised target needs none) join the RL samples, trained by likelihood in
 * the same forward (report-sft-samples.ts, trainer-loss.ts).
 */
import { computeAdvantages, learnFromBatch } from '../advantage/compute.ts';
import type { ActionValueTable } from '../advantage/critic.ts';
import { decisionAdvantages } from '../advantage/from-decisions.ts';
import { scoredGroupsFromTrajectories } from '../advantage/from-trajectories.ts';
import type { AdvantageStats } from '../advantage/normalize.ts';
import { turnRewardsOf, type ScoredGroup, type TrajectoryAdvantages } from '../advantage/types.ts';
import { Rng } from '../core/random.ts';
import type { Trajectory } from '../core/trajectory.ts';
import type { EnvSpec } from '../envs/env.ts';
import type { StepResult } from '../model/param-trainer.ts';
import { tree } from '../model/engine.ts';
import type { EmbeddedPolicy } from '../policy/embedded.ts';
import type { RewardConfig } from '../rewards/reward.ts';
import { runRollouts } from '../rollout/rollouts.ts';
import { assertSomeFinished } from '../rollout/summary.ts';
import type { ModelAssets } from './default-model.ts';
import type { LayoutSample, LayoutShapes, RlLayout } from './rl-batch.ts';
import type { FormatAnchor } from './format-anchor.ts';
import { reportSftSamples } from './report-sft-samples.ts';
import { buildSamples } from './samples.ts';
import { buildDecisionSamples } from './samples-decisions.ts';
import { exploredAnswers, type ExploredAnswers } from './explored-answers.ts';
import type { SampleBatch } from './samples-types.ts';
import { mergeIdenticalSamples } from './samples-merge.ts';
import { klBetaAt, type TrainSettings } from './train-config.ts';
import { rlLayoutInputs, type KlReference } from './trainer-loss.ts';
import { miniBatches } from './mini-batches.ts';
import type { RlWeights } from './rl-weights.ts';
import { rolloutMetrics, updateMetrics } from './trainer-metrics.ts';
import { stepSeeds } from './trainer-seeds.ts';

export interface RlStepContext<O extends Record<string, unknown>> {
  spec: EnvSpec<O>;
  options: O;
  rewards: RewardConfig | undefined;
  settings: TrainSettings;
  assets: ModelAssets;
  policy: EmbeddedPolicy;
  /** What the optimiser trains: every weight or LoRA adapters (rl-weights.ts). */
  weights: RlWeights;
  shapes: LayoutShapes;
  /** The frozen reference (the warm-started weights) when β > 0. */
  reference: KlReference | null;
  maxTurns: number;
  maxTokens: number;
  runId: string;
  /** Adds format samples to a step whose answers turned illegal (format-anchor.ts). */
  formatAnchor: FormatAnchor<O>;
  /** The critic estimator's action values, learned over the run (empty under the other estimators). */
  actionValues: ActionValueTable;
  /** Counted over the step: samples left out for not fitting a row. */
  counts: { tooLong: number };
}

export interface RlStepResult {
  metrics: Record<string, number>;
  episodes: number;
  /** The step's trajectories in (seed, sample) order. */
  trajectories: Trajectory[];
}

/** The trajectories of the groups `droppedIds` at advantage 0 (buildSamples trains only their refused answers). */
function droppedGroupEntries(groups: readonly ScoredGroup[], droppedIds: readonly string[]): TrajectoryAdvantages[] {
  const ids = new Set(droppedIds);
  return groups
    .filter((g) => ids.has(g.groupId))
    .flatMap((g) => g.samples.map((s) => ({ trajectoryId: s.trajectoryId, groupId: g.groupId, turnAdvantages: turnRewardsOf(s).map(() => 0) })));
}

/** A sample's group (a dense decision, a GRPO group): its samples share a prompt, so a mini-batch keeps them together. */
function groupOf(sample: LayoutSample): string | undefined {
  return 'groupId' in sample && typeof sample.groupId === 'string' ? sample.groupId : undefined;
}

/** A sample's episode: with update.shareConversations its decisions share the episode's text, so a mini-batch keeps them together. */
function episodeOf(sample: LayoutSample): string | undefined {
  return 'trajectoryId' in sample && typeof sample.trajectoryId === 'string' ? sample.trajectoryId : groupOf(sample);
}

/**
 * One optimiser update per layout the samples fill (a fixed shape each), or with update.accumulate
 * one for them all, at the schedule's RL step `step`.
 */
async function optimise<O extends Record<string, unknown>>(ctx: RlStepContext<O>, samples: readonly LayoutSample[], klBeta: number, step: number) {
  const out: { result: StepResult; layout: RlLayout }[] = [];
  const { layouts, tooLong } = ctx.shapes.layouts(samples);
  ctx.counts.tooLong += tooLong;
  const accumulate = ctx.settings.update.accumulate;
  for (const layout of layouts) {
    const inputs = rlLayoutInputs(ctx.assets.cfg, layout, ctx.reference, klBeta);
    // The learning-rate schedule counts RL steps (train-config.ts optimizer).
    const trained = ctx.weights.withBase(inputs);
    if (!accumulate) out.push({ result: await ctx.weights.trainer.step(trained, step), layout });
    else out.push({ result: { ...(await ctx.weights.trainer.accumulate(trained)), gradNorm: Number.NaN, learningRate: Number.NaN }, layout });
  }
  if (accumulate && out.length > 0) {
    // One update for the mini-batch: each of its layouts reports the update's norm and rate.
    const applied = await ctx.weights.trainer.applyAccumulated(step);
    for (const u of out) Object.assign(u.result, { gradNorm: applied.gradNorm, learningRate: applied.learningRate });
  }
  return { layouts: out, optimizerUpdates: accumulate ? Math.min(1, out.length) : out.length };
}

export async function rlStep<O extends Record<string, unknown>>(ctx: RlStepContext<O>, step: number): Promise<RlStepResult> {
  const { settings } = ctx;
  const t0 = performance.now();
  // The rollouts start from empty prompt caches, as a run resumed at this step does: whatever sampled
  // since the last update (an evaluation) would otherwise hand them its cached prompts, whose
  // logprobs round differently from prompts computed whole (--resume would not be exact).
  ctx.policy.clearCaches();
  const rollout = await runRollouts({
    spec: ctx.spec,
    options: ctx.options,
    policy: ctx.policy,
    seeds: stepSeeds(settings.seed, step, settings.batchSeeds),
    groupSize: settings.groupSize,
    concurrency: settings.rollout.concurrency,
    episode: {
      maxTurns: ctx.maxTurns,
      maxTokens: ctx.maxTokens,
      temperature: settings.episode.temperature,
      decisionSamples: settings.episode.decisionSamples ?? 1,
    },
    rewards: ctx.rewards,
    runId: ctx.runId,
  });
  const t1 = performance.now();
  assertSomeFinished(rollout.summary, `RL step ${step}`);

  // Failed episodes (an env error) carry no reward to learn from; they are counted, not trained on.
  const usable = rollout.trajectories.filter((t) => t.status !== 'failed');
  let advantageStats: AdvantageStats;
  let batch: SampleBatch;
  let criticSilent: number | null = null;
  let explored: ExploredAnswers | null = null;
  if (settings.advantage.estimator === 'dense') {
    // Each decision's samples compared with each other by their exact expected rewards, and with the
    // legal actions none of them took when the run explores (explored-answers.ts).
    const { estimator: _dense, explore, ...options } = settings.advantage;
    explored = explore > 0 ? exploredAnswers(usable, explore, new Rng(settings.seed, 0x3e1d + step), ctx.assets) : null;
    const decisions = decisionAdvantages(usable, options, explored?.answers);
    advantageStats = decisions.stats;
    // Under invalidAnswers 'penalize' a refused answer trains at the penalty even where every answer
    // of its decision tied (all refused): otherwise nothing pushes the policy off that answer.
    const refused = settings.samples.invalidAnswers === 'penalize' ? decisions.droppedSamples.filter((s) => s.invalid) : [];
    batch = buildDecisionSamples(usable, [...decisions.samples, ...refused], { ...settings.samples, endOfTurnTokenIds: ctx.assets.stopTokenIds });
  } else {
    const groups = scoredGroupsFromTrajectories(usable);
    const advantages = computeAdvantages(groups, settings.advantage, { actionValues: ctx.actionValues });
    // The critic's table learns this step's returns after judging it (a decision is never judged by its own return).
    learnFromBatch(groups, settings.advantage, { actionValues: ctx.actionValues });
    advantageStats = advantages.stats;
    // A packed conversation is cut where it would no longer fit a row behind the shared prefix.
    const prefix = ctx.shapes.prefixLength;
    const maxPackedTokens = settings.samples.maxPackedTokens ?? (Number.isFinite(prefix) ? prefix + ctx.shapes.length + 1 : null);
    // As for dense decisions: the refused answers of the groups dropped for tying train at the penalty.
    const dropped = droppedGroupEntries(groups, advantages.dropped);
    // Under the critic an episode whose every decision got 0 (states it knows too little of yet)
    // carries no signal either: like a tied group, only its refused answers train.
    const silent = settings.advantage.estimator === 'critic' ? advantages.advantages.filter((a) => a.turnAdvantages.every((x) => x === 0)) : null;
    if (silent) criticSilent = silent.length;
    batch = buildSamples(usable, [...advantages.advantages, ...dropped], { ...settings.samples, maxPackedTokens, endOfTurnTokenIds: ctx.assets.stopTokenIds }, {
      refusedOnly: new Set([...dropped, ...(silent ?? [])].map((d) => d.trajectoryId)),
    });
  }
  // Identical RL samples train once with their count as weight (exact); batch.stats keeps the counts before merging.
  const rl = settings.samples.mergeIdentical ? mergeIdenticalSamples(batch.samples) : { samples: batch.samples, merged: 0 };
  const reportSft = settings.report.mode === 'supervised' ? reportSftSamples(usable, ctx.assets) : null;
  const rlAndReport: LayoutSample[] = reportSft ? [...rl.samples, ...reportSft.samples] : rl.samples;
  const anchored = ctx.formatAnchor.triggers(rollout.summary.invalidActionRate) ? await ctx.formatAnchor.samples(step) : [];
  // Anchor decisions too long for a row behind the batch's shared prefix are left out (not counted as too long).
  const fitting = anchored.length > 0 ? ctx.shapes.fittingTokens([...rlAndReport, ...anchored]) : 0;
  const anchor = anchored.filter((s) => s.tokens.length <= fitting);
  const samples: LayoutSample[] = anchor.length > 0 ? [...rlAndReport, ...anchor] : rlAndReport;
  const t2 = performance.now();

  const klBeta = klBetaAt(settings.loss, step, settings.steps);
  const updates: { result: StepResult; layout: RlLayout }[] = [];
  let optimizerUpdates = 0;
  ctx.counts.tooLong = 0;
  if (samples.length > 0) {
    for (let epoch = 0; epoch < settings.update.epochs; epoch++) {
      const rng = new Rng(settings.seed, 0x7e57 + step * 131 + epoch);
      for (const part of miniBatches(samples, settings.update.miniBatches, rng, settings.update.shareConversations ? episodeOf : groupOf)) {
        const done = await optimise(ctx, part, klBeta, step);
        updates.push(...done.layouts);
        optimizerUpdates += done.optimizerUpdates;
      }
    }
  }
  const effective = ctx.weights.effective();
  ctx.policy.updateWeights(effective, step);
  tree.dispose(effective);
  const t3 = performance.now();

  const metrics: Record<string, number> = {
    ...rolloutMetrics(rollout.summary, rollout.trajectories),
    ...updateMetrics(updates, advantageStats, batch.stats, optimizerUpdates),
    'samples/too_long': ctx.counts.tooLong,
    'samples/merged': rl.merged,
    'samples/format_anchor': anchor.length,
    ...(reportSft
      ? {
          'samples/report_sft': reportSft.stats.samples,
          'samples/report_sft_without_exact_ids': reportSft.stats.withoutExactIds,
          'tokens/report_sft': reportSft.stats.tokens,
          'tokens/report_sft_targets': reportSft.stats.targetTokens,
        }
      : {}),
    ...(ctx.reference ? { 'kl/beta': klBeta } : {}),
    ...(explored ? { 'samples/explored': explored.answers.length, 'samples/explore_skipped': explored.skipped } : {}),
    // Episodes the critic could not judge at any decision (their states' actions not yet known).
    ...(criticSilent !== null ? { 'advantage/critic_silent_episodes': criticSilent } : {}),
    'time/rollout_s': (t1 - t0) / 1000,
    'time/advantage_s': (t2 - t1) / 1000,
    'time/train_s': (t3 - t2) / 1000,
  };
  const generated = metrics['tokens/completion'] + metrics['tokens/alternatives'];
  metrics['throughput/rollout_tokens_per_s'] = t1 > t0 ? generated / ((t1 - t0) / 1000) : 0;
  metrics['throughput/train_tokens_per_s'] = t3 > t2 ? metrics['tokens/train_computed'] / ((t3 - t2) / 1000) : 0;
  metrics['throughput/episodes_per_s'] = rollout.trajectories.length / ((t3 - t0) / 1000);
  return { metrics, episodes: rollout.trajectories.length, trajectories: rollout.trajectories };
}

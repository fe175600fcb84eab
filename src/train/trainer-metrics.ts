/**
 * The per-step metrics a run logs (DESIGN rule 7: every reward part by name, never just the sum):
 * rollout figures, advantage statistics, the loss's metrics (KL, clip fractions, entropy, ...),
 * sample and token counts. Timings (`time/*`) and rates (`throughput/*`) are added by the step.
 */
import type { AdvantageStats } from '../advantage/normalize.ts';
import type { Trajectory } from '../core/trajectory.ts';
import type { StepResult } from '../model/param-trainer.ts';
import type { RolloutSummary } from '../rollout/summary.ts';
import type { RlLayout } from './rl-batch.ts';
import type { SampleStats } from './samples-types.ts';

/** Metric names whose values depend on the machine's speed (excluded when runs are compared). */
export function isTimingMetric(name: string): boolean {
  return name.startsWith('time/') || name.startsWith('throughput/');
}

export function rolloutMetrics(summary: RolloutSummary, trajectories: readonly Trajectory[]): Record<string, number> {
  const finished = summary.episodes.finished;
  const out: Record<string, number> = {
    'reward/mean': summary.meanReturn.mean,
    'reward/std': summary.meanReturn.std,
    'episodes/count': finished,
    'episodes/failed': summary.episodes.failed,
    'episodes/win_rate': summary.winRate,
    'episodes/draw_rate': summary.drawRate,
    'episodes/loss_rate': summary.lossRate,
    'episodes/length': summary.meanTurns,
    'episodes/truncation_rate': finished > 0 ? summary.episodes.truncated / finished : 0,
    'episodes/invalid_ending_rate': finished > 0 ? summary.invalidEndings / finished : 0,
    'actions/invalid_rate': summary.invalidActionRate,
  };
  for (const [part, value] of Object.entries(summary.meanRewardParts)) out[`reward/${part}`] = value;
  let prompt = 0;
  let completion = 0;
  let alternatives = 0;
  let lengthFinishes = 0;
  for (const t of trajectories) {
    prompt += t.metrics.promptTokens ?? 0;
    completion += t.metrics.completionTokens ?? 0;
    alternatives += t.metrics.alternativeTokens ?? 0;
    lengthFinishes += t.metrics.lengthFinishes ?? 0;
  }
  out['tokens/prompt'] = prompt;
  out['tokens/completion'] = completion;
  // Sampled beside the played answers (episode.decisionSamples), not played.
  out['tokens/alternatives'] = alternatives;
  out['actions/length_cut_rate'] = summary.llmCalls > 0 ? lengthFinishes / summary.llmCalls : 0;
  out['actions/completion_tokens'] = summary.llmCalls > 0 ? completion / summary.llmCalls : 0;
  return out;
}

/** The loss metrics of the supervised term (trainer-loss.ts). */
const SUPERVISED_METRICS = new Set(['sftLoss', 'sftTokens']);

/** Loss metrics averaged over the step's layouts (each an optimiser update unless accumulated); advantage and sample statistics. */
export function updateMetrics(
  updates: readonly { result: StepResult; layout: RlLayout }[],
  advantage: AdvantageStats,
  samples: SampleStats,
  /** Optimiser updates made; fewer than the layouts when gradients were accumulated. */
  optimizerUpdates = updates.length,
): Record<string, number> {
  const out: Record<string, number> = {
    'advantage/mean': advantage.mean,
    'advantage/std': advantage.std,
    'advantage/min': advantage.min,
    'advantage/max': advantage.max,
    'groups/count': advantage.groups,
    'groups/zero_variance': advantage.zeroVarianceGroups,
    'groups/dropped': advantage.droppedGroups,
    'samples/count': samples.samples,
    'samples/trained_calls': samples.trainedCalls,
    'samples/excluded_calls': samples.calls - samples.trainedCalls,
    'samples/invalid_penalized': samples.invalidPenalized,
    'samples/packed_share': samples.packedShare,
    'tokens/trained': samples.trainedTokens,
    'tokens/samples': samples.tokens,
    'train/updates': optimizerUpdates,
    'train/layouts': updates.length,
  };
  let computed = 0;
  for (const u of updates) computed += u.layout.computedTokens;
  out['tokens/train_computed'] = computed;
  if (updates.length === 0) return out;
  const mean = (f: (r: StepResult) => number | undefined, over = updates): number => {
    let sum = 0;
    for (const u of over) sum += f(u.result) ?? 0;
    return sum / over.length;
  };
  out['train/loss'] = mean((r) => r.loss);
  out['train/grad_norm'] = mean((r) => r.gradNorm);
  out['train/lr'] = updates[updates.length - 1].result.learningRate;
  const names = new Set(updates.flatMap((u) => Object.keys(u.result.metrics)));
  const rename: Record<string, string> = {
    approxKl: 'kl/policy',
    refKl: 'kl/reference',
    clipFracLow: 'clip/frac_low',
    clipFracHigh: 'clip/frac_high',
    ratioMean: 'clip/ratio_mean',
    isCappedShare: 'importance/capped_share',
    isWeightMean: 'importance/weight_mean',
    policyLoss: 'train/policy_loss',
    klLoss: 'train/kl_loss',
    entropy: 'train/entropy',
    entropyBonus: 'train/entropy_bonus',
    sftLoss: 'train/sft_loss',
    sftTokens: 'train/sft_tokens',
  };
  // The supervised metrics (report.mode 'supervised') are averaged over the updates whose layout had
  // supervised targets, the RL ones over those with RL tokens: a layout of supervised samples alone
  // reports 0 for the RL figures (a ratio mean of 0), which would dilute their mean.
  const rlUpdates = updates.filter((u) => u.layout.mask.some((m) => m > 0));
  const sftUpdates = updates.filter((u) => u.layout.sftMask !== undefined);
  for (const name of names) {
    out[rename[name] ?? `train/${name}`] = mean((r) => r.metrics[name], SUPERVISED_METRICS.has(name) ? sftUpdates : rlUpdates);
  }
  out['clip/frac'] = (out['clip/frac_low'] ?? 0) + (out['clip/frac_high'] ?? 0);
  return out;
}

/** Non-finite values (a rate over nothing) are not stored. */
export function finiteMetrics(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).filter(([, v]) => Number.isFinite(v)));
}

/** Headline figures of a set of rollouts: counts, reasons, return, outcome rates, invalid actions, quality. */
import { RunningMean, type MeanCi } from '../core/stats.ts';
import type { Trajectory } from '../core/trajectory.ts';
import { QualityTally, type QualityReport } from './quality.ts';

export interface RolloutSummary {
  episodes: { requested: number; finished: number; completed: number; truncated: number; failed: number };
  /** Why episodes failed or were truncated, counted by the reason's head (the text before its first ':'). */
  failureReasons: Record<string, number>;
  truncationReasons: Record<string, number>;
  /** Episodes that ended on an invalid action (they count as completed). */
  invalidEndings: number;
  /** Over episodes that did not fail. */
  meanReturn: MeanCi;
  /** Mean of each reward part per episode, over episodes that did not fail (rule 7). */
  meanRewardParts: Record<string, number>;
  winRate: number;
  lossRate: number;
  drawRate: number;
  /** Invalid answers per LLM call. */
  invalidActionRate: number;
  meanTurns: number;
  turns: number;
  llmCalls: number;
  elapsedMs: number;
  episodesPerSec: number;
  turnsPerSec: number;
  quality: QualityReport;
}

function reasonHead(reason: string): string {
  const colon = reason.indexOf(':');
  return colon === -1 ? reason : reason.slice(0, colon);
}

/** Distinct reasons kept word for word; past them a reason is counted under its head (the text before its first colon). */
const MAX_DISTINCT_REASONS = 20;
const MAX_REASON_LENGTH = 200;

/**
 * Counts `reason` in `counts`: word for word (the cause is what a reader needs: "policy 'x' failed:
 * Allocation exceeds the 4 GiB memory32 limit"), unless the reasons already number
 * MAX_DISTINCT_REASONS (they vary by seed, say), when it goes under its head.
 */
function countReason(counts: Record<string, number>, reason: string | null): void {
  const full = (reason ?? 'unknown').slice(0, MAX_REASON_LENGTH);
  const key = Object.hasOwn(counts, full) || Object.keys(counts).length < MAX_DISTINCT_REASONS ? full : reasonHead(full);
  counts[key] = (Object.hasOwn(counts, key) ? counts[key] : 0) + 1;
}

/** Accumulates the summary one trajectory at a time, so a long run need not keep its trajectories. */
export class RolloutTally {
  private readonly episodes = { finished: 0, completed: 0, truncated: 0, failed: 0 };
  private readonly failureReasons: Record<string, number> = {};
  private readonly truncationReasons: Record<string, number> = {};
  private readonly returns = new RunningMean();
  private readonly partSums: Record<string, number> = {};
  private readonly quality = new QualityTally();
  private invalidEndings = 0;
  private wins = 0;
  private losses = 0;
  private draws = 0;
  private turns = 0;
  private llmCalls = 0;
  private invalid = 0;

  add(t: Trajectory): void {
    this.episodes.finished++;
    this.episodes[t.status]++;
    this.turns += t.turns.length;
    this.llmCalls += t.metrics.llmCalls ?? 0;
    this.invalid += t.metrics.invalidActions ?? 0;
    this.quality.add(t);
    if (t.status === 'failed') {
      countReason(this.failureReasons, t.statusReason);
      return;
    }
    if (t.status === 'truncated') countReason(this.truncationReasons, t.statusReason);
    if (t.turns.at(-1)?.invalid) this.invalidEndings++;
    this.returns.add(t.reward);
    for (const key in t.rewardParts) this.partSums[key] = (this.partSums[key] ?? 0) + t.rewardParts[key];
    this.wins += t.metrics.win ?? 0;
    this.losses += t.metrics.loss ?? 0;
    this.draws += t.metrics.draw ?? 0;
  }

  summary(requested: number, elapsedMs: number): RolloutSummary {
    const scored = this.returns.count;
    const rate = (x: number) => (scored > 0 ? x / scored : NaN);
    const meanRewardParts: Record<string, number> = {};
    for (const key in this.partSums) meanRewardParts[key] = this.partSums[key] / scored;
    const seconds = elapsedMs / 1000;
    const finished = this.episodes.finished;
    return {
      episodes: { requested, ...this.episodes },
      failureReasons: { ...this.failureReasons },
      truncationReasons: { ...this.truncationReasons },
      invalidEndings: this.invalidEndings,
      meanReturn: this.returns.result(),
      meanRewardParts,
      winRate: rate(this.wins),
      lossRate: rate(this.losses),
      drawRate: rate(this.draws),
      invalidActionRate: this.llmCalls > 0 ? this.invalid / this.llmCalls : 0,
      meanTurns: finished > 0 ? this.turns / finished : NaN,
      turns: this.turns,
      llmCalls: this.llmCalls,
      elapsedMs,
      episodesPerSec: seconds > 0 ? finished / seconds : 0,
      turnsPerSec: seconds > 0 ? this.turns / seconds : 0,
      quality: this.quality.report(),
    };
  }
}

export function summarizeRollouts(trajectories: readonly Trajectory[], requested: number, elapsedMs: number): RolloutSummary {
  const tally = new RolloutTally();
  for (const t of trajectories) tally.add(t);
  return tally.summary(requested, elapsedMs);
}

/**
 * Throws when episodes were played and every one failed (a broken policy or env, e.g. the engine out
 * of memory): a training run must stop there with the reasons, not go on learning from nothing.
 */
export function assertSomeFinished(summary: RolloutSummary, what: string): void {
  const { finished, failed } = summary.episodes;
  if (finished === 0 || failed < finished) return;
  const reasons = Object.entries(summary.failureReasons)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${n} × ${reason}`)
    .join('; ');
  throw new Error(`${what}: every one of the ${finished} episodes failed (${reasons})`);
}

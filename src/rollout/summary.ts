/** Headline figures of a set of rollouts: counts, reasons, return, outcome rates, invalid actions, quality. */
import { meanCi, type MeanCi } from '../core/stats.ts';
import type { Trajectory } from '../core/trajectory.ts';
import { summarizeQuality, type QualityReport } from './quality.ts';

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

function reasonHead(reason: string | null): string {
  if (!reason) return 'unknown';
  const colon = reason.indexOf(':');
  return colon === -1 ? reason : reason.slice(0, colon);
}

export function summarizeRollouts(trajectories: readonly Trajectory[], requested: number, elapsedMs: number): RolloutSummary {
  const episodes = { requested, finished: trajectories.length, completed: 0, truncated: 0, failed: 0 };
  const failureReasons: Record<string, number> = {};
  const truncationReasons: Record<string, number> = {};
  const returns: number[] = [];
  const partSums: Record<string, number> = {};
  let invalidEndings = 0;
  let wins = 0;
  let losses = 0;
  let draws = 0;
  let turns = 0;
  let llmCalls = 0;
  let invalid = 0;
  for (const t of trajectories) {
    episodes[t.status]++;
    turns += t.turns.length;
    llmCalls += t.metrics.llmCalls ?? 0;
    invalid += t.metrics.invalidActions ?? 0;
    if (t.status === 'failed') {
      const key = reasonHead(t.statusReason);
      failureReasons[key] = (failureReasons[key] ?? 0) + 1;
      continue;
    }
    if (t.status === 'truncated') {
      const key = reasonHead(t.statusReason);
      truncationReasons[key] = (truncationReasons[key] ?? 0) + 1;
    }
    if (t.turns.at(-1)?.invalid) invalidEndings++;
    returns.push(t.reward);
    for (const key in t.rewardParts) partSums[key] = (partSums[key] ?? 0) + t.rewardParts[key];
    wins += t.metrics.win ?? 0;
    losses += t.metrics.loss ?? 0;
    draws += t.metrics.draw ?? 0;
  }
  const scored = returns.length;
  const rate = (x: number) => (scored > 0 ? x / scored : NaN);
  const meanRewardParts: Record<string, number> = {};
  for (const key in partSums) meanRewardParts[key] = partSums[key] / scored;
  const seconds = elapsedMs / 1000;
  return {
    episodes,
    failureReasons,
    truncationReasons,
    invalidEndings,
    meanReturn: meanCi(returns),
    meanRewardParts,
    winRate: rate(wins),
    lossRate: rate(losses),
    drawRate: rate(draws),
    invalidActionRate: llmCalls > 0 ? invalid / llmCalls : 0,
    meanTurns: trajectories.length > 0 ? turns / trajectories.length : NaN,
    turns,
    llmCalls,
    elapsedMs,
    episodesPerSec: seconds > 0 ? trajectories.length / seconds : 0,
    turnsPerSec: seconds > 0 ? turns / seconds : 0,
    quality: summarizeQuality(trajectories),
  };
}

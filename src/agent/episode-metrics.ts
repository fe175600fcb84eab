/** What an episode counts as it runs, and the metrics recorded on its trajectory. */
import type { Outcome } from './outcome.ts';

export interface EpisodeCounts {
  llmCalls: number;
  /** Answers that were not a legal action, retried ones included. */
  invalidActions: number;
  retries: number;
  informationalCalls: number;
  /** Completions cut at maxTokens (finishReason 'length'). */
  lengthFinishes: number;
  timeouts: number;
  promptTokens: number;
  completionTokens: number;
  /** Tokens of the other samples drawn at decisions (EpisodeSettings.decisionSamples). */
  alternativeTokens: number;
  /** False once a completion came without token ids: the token counts are then unknown. */
  tokensKnown: boolean;
  policyMs: number;
  envMs: number;
}

export function newCounts(): EpisodeCounts {
  return {
    llmCalls: 0,
    invalidActions: 0,
    retries: 0,
    informationalCalls: 0,
    lengthFinishes: 0,
    timeouts: 0,
    promptTokens: 0,
    completionTokens: 0,
    alternativeTokens: 0,
    tokensKnown: true,
    policyMs: 0,
    envMs: 0,
  };
}

/** Trajectory.metrics: counts, token totals where known, and win/loss/draw (1/0) unless the episode failed. */
export function episodeMetrics(counts: EpisodeCounts, turns: number, outcome: Outcome | null): Record<string, number> {
  const metrics: Record<string, number> = {
    turns,
    llmCalls: counts.llmCalls,
    invalidActions: counts.invalidActions,
    retries: counts.retries,
    informationalCalls: counts.informationalCalls,
    lengthFinishes: counts.lengthFinishes,
    timeouts: counts.timeouts,
    policyMs: counts.policyMs,
    envMs: counts.envMs,
  };
  if (counts.tokensKnown && counts.llmCalls > counts.timeouts) {
    metrics.promptTokens = counts.promptTokens;
    metrics.completionTokens = counts.completionTokens;
  }
  // Tokens of the decisions' other samples (EpisodeSettings.decisionSamples), generated but not played.
  if (counts.alternativeTokens > 0) metrics.alternativeTokens = counts.alternativeTokens;
  if (outcome !== null) {
    metrics.win = outcome === 'win' ? 1 : 0;
    metrics.loss = outcome === 'loss' ? 1 : 0;
    metrics.draw = outcome === 'draw' ? 1 : 0;
  }
  return metrics;
}

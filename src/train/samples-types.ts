/**
 * Training samples (DESIGN.md rules 1 and 2): plain JSON data the trainer reads, built from recorded
 * turns by `buildSamples` (samples.ts). Every per-token array is aligned with `tokens`: position i
 * describes token i as a *target* (predicted from tokens[0..i-1]); the trainer shifts by one.
 */
import type { FinishReason } from '../core/completion.ts';

/** Why an LLM call was not trained on (rule 1: never re-tokenise generated text). */
export const EXCLUSION_REASONS = [
  /** finishReason 'timeout' or 'error': nothing usable was sampled. */
  'call_failed',
  /** promptTokenIds or completionTokenIds is null (scripted policy, server without ids). */
  'missing_ids',
  /** An id that is not a non-negative integer. */
  'bad_ids',
  /** The completion has no tokens. */
  'empty_completion',
  /** tokenIdsExact is false (the ids are a re-tokenisation) and the config does not allow approximate ids. */
  'inexact_ids',
  /** No sampling logprobs: the importance ratio needs them. */
  'missing_logprobs',
  /** Logprobs not one finite number per completion token. */
  'bad_logprobs',
  /** Cut at max tokens (finishReason 'length') with `truncated: 'mask'`. */
  'truncated_length',
  /** A call of a truncated episode (status 'truncated') with `truncated: 'mask'`. */
  'truncated_episode',
] as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];

/** 'length': this completion hit max tokens; 'episode': the episode was truncated (max turns, context budget, timeout). */
export type Truncation = 'length' | 'episode';

/** One trained completion inside a sample: tokens [start, end) are exactly what one LLM call sampled. */
export interface SampleSpan {
  start: number;
  end: number;
  /** Turn index and call index within the turn (retries and informational rounds are separate calls). */
  turn: number;
  call: number;
  /** The value written to advantages[start..end): the turn's advantage, or the truncation penalty. */
  advantage: number;
  /** The weights version that sampled these tokens. */
  policyVersion: number;
  finishReason: FinishReason;
  truncation: Truncation | null;
  /** False only when the config allowed approximate (re-tokenised) ids and this call had them. */
  exactIds: boolean;
}

export interface TrainingSample {
  /** `${trajectoryId}:${turn}.${call}` of its first span. */
  id: string;
  trajectoryId: string;
  groupId: string;
  /** The episode's total reward (what an outcome-only consumer such as Atropos `scores` wants). */
  score: number;
  /** Prompt ids exactly as the sampler saw them, then the sampled ids (several spans when packed). */
  tokens: number[];
  /** 1 on sampled completion tokens (through the end-of-turn token), 0 elsewhere. */
  lossMask: (0 | 1)[];
  /** Per token: the span's advantage where lossMask is 1, 0 elsewhere. */
  advantages: number[];
  /** Per token: the sampling logprob where lossMask is 1, 0 elsewhere. */
  logprobs: number[];
  /** The oldest policy version among its spans (what a staleness bound checks). */
  policyVersion: number;
  /** The trained spans, in order, non-overlapping. */
  spans: SampleSpan[];
  /**
   * How many identical samples this one stands for (mergeIdenticalSamples, samples-merge.ts): the
   * loss counts it that many times. Absent: 1.
   */
  weight?: number;
  /** Written by the trainer, not sampled (train/explored-answers.ts): its logprobs are placeholders (rl-batch.ts LayoutSample.explored). */
  explored?: boolean;
}

export interface SampleStats {
  /** Trajectories read (those with advantages). */
  trajectories: number;
  /** LLM calls seen in them. */
  calls: number;
  /** Calls trained on (= spans). */
  trainedCalls: number;
  samples: number;
  /** Σ sample lengths. */
  tokens: number;
  /** Σ loss mask. */
  trainedTokens: number;
  /** What the same spans would cost as one sample per call (prompt + completion each). */
  tokensUnpacked: number;
  /** Calls not trained on, by reason (every reason present, 0 when none). */
  excluded: Record<ExclusionReason, number>;
  /** Calls trained on with approximate ids (only with `allowApproximateIds`). */
  approximateIds: number;
  /** Calls affected by truncation, whatever the mode did with them. */
  truncated: Record<Truncation, number>;
  /** Calls trained with the truncation penalty as their advantage. */
  penalized: number;
  /** Refused answers trained with the invalid-answer penalty as their advantage (invalidAnswers 'penalize'). */
  invalidPenalized: number;
  /** Share of trained calls that sit in a sequence with at least one other call (0 when none trained). */
  packedShare: number;
  /** Times a call could not extend its conversation's sequence because the ids were not a prefix. */
  packFallbacks: number;
  /** Times a call started a new sequence because `maxPackedTokens` would have been exceeded. */
  packLimitSplits: number;
  /** Finished calls ('stop' / 'tool_calls') whose ids do not end with one of `endOfTurnTokenIds` (when set). */
  missingEndOfTurn: number;
}

export interface SampleBatch {
  samples: TrainingSample[];
  stats: SampleStats;
}

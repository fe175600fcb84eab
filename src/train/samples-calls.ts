/**
 * Which recorded LLM calls can be trained on, and how (DESIGN.md rule 1). Only what the sampler
 * produced is trainable: ids that are missing or re-tokenised (tokenIdsExact false) are left out
 * and counted, never rebuilt from the text.
 */
import type { Completion } from '../core/completion.ts';
import type { ResolvedSamplesConfig } from './samples-config.ts';
import type { ExclusionReason, Truncation } from './samples-types.ts';

/** A call that will be trained on: its exact ids and logprobs, and the advantage its tokens get. */
export interface TrainableCall {
  turn: number;
  call: number;
  promptIds: readonly number[];
  completionIds: readonly number[];
  logprobs: readonly number[];
  advantage: number;
  policyVersion: number;
  finishReason: Completion['finishReason'];
  truncation: Truncation | null;
  exactIds: boolean;
  penalized: boolean;
}

export type CallVerdict =
  | {
      train: true;
      truncation: Truncation | null;
      exactIds: boolean;
      penalized: boolean;
      promptIds: readonly number[];
      completionIds: readonly number[];
      logprobs: readonly number[];
    }
  | { train: false; reason: ExclusionReason; truncation: Truncation | null };

const isTokenId = (id: number): boolean => Number.isInteger(id) && id >= 0;

/** The first reason a call cannot be trained on, in a fixed order, or how it is trained. */
export function callVerdict(
  completion: Completion,
  episodeTruncated: boolean,
  config: ResolvedSamplesConfig,
): CallVerdict {
  const truncation: Truncation | null =
    completion.finishReason === 'length' ? 'length' : episodeTruncated ? 'episode' : null;
  const exclude = (reason: ExclusionReason): CallVerdict => ({ train: false, reason, truncation });
  const { promptTokenIds: prompt, completionTokenIds: ids, logprobs } = completion;

  if (completion.finishReason === 'timeout' || completion.finishReason === 'error') return exclude('call_failed');
  if (prompt === null || ids === null) return exclude('missing_ids');
  if (!prompt.every(isTokenId) || !ids.every(isTokenId)) return exclude('bad_ids');
  if (ids.length === 0) return exclude('empty_completion');
  if (!completion.tokenIdsExact && !config.allowApproximateIds) return exclude('inexact_ids');
  if (logprobs === null) return exclude('missing_logprobs');
  if (logprobs.length !== ids.length || !logprobs.every(Number.isFinite)) return exclude('bad_logprobs');
  if (truncation !== null && config.truncated === 'mask') {
    return exclude(truncation === 'length' ? 'truncated_length' : 'truncated_episode');
  }
  return {
    train: true,
    truncation,
    exactIds: completion.tokenIdsExact,
    penalized: truncation !== null && config.truncated === 'penalize',
    promptIds: prompt,
    completionIds: ids,
    logprobs,
  };
}

/** Whether a finished completion ends with an end-of-turn id (true when none are configured or it did not finish). */
export function endsTurn(completion: Completion, endOfTurnTokenIds: readonly number[]): boolean {
  if (endOfTurnTokenIds.length === 0) return true;
  if (completion.finishReason !== 'stop' && completion.finishReason !== 'tool_calls') return true;
  const last = completion.completionTokenIds?.at(-1);
  return last !== undefined && endOfTurnTokenIds.includes(last);
}

/** One training sample from a packed sequence of calls (one call when not packed). */
import type { TrainableCall } from './samples-calls.ts';
import type { SampleSpan, TrainingSample } from './samples-types.ts';

export interface SampleOwner {
  trajectoryId: string;
  groupId: string;
  score: number;
}

/**
 * tokens = the last call's prompt ids + its completion ids (its prompt holds every earlier call of
 * the sequence, checked by packConversation). Each call's completion is a span [p, p + n) with p its
 * prompt length: mask 1, its advantage and its sampling logprobs there; 0 everywhere else.
 */
export function assembleSample(sequence: readonly TrainableCall[], owner: SampleOwner): TrainingSample {
  const first = sequence[0];
  const last = sequence[sequence.length - 1];
  if (!first || !last) throw new Error('assembleSample: a sequence needs at least one call');
  const tokens = [...last.promptIds, ...last.completionIds];
  const lossMask = new Array<0 | 1>(tokens.length).fill(0);
  const advantages = new Array<number>(tokens.length).fill(0);
  const logprobs = new Array<number>(tokens.length).fill(0);
  const spans: SampleSpan[] = sequence.map((call) => {
    const start = call.promptIds.length;
    const end = start + call.completionIds.length;
    for (let i = start; i < end; i++) {
      lossMask[i] = 1;
      advantages[i] = call.advantage;
      logprobs[i] = call.logprobs[i - start];
    }
    return {
      start,
      end,
      turn: call.turn,
      call: call.call,
      advantage: call.advantage,
      policyVersion: call.policyVersion,
      finishReason: call.finishReason,
      truncation: call.truncation,
      exactIds: call.exactIds,
    };
  });
  return {
    id: `${owner.trajectoryId}:${first.turn}.${first.call}`,
    trajectoryId: owner.trajectoryId,
    groupId: owner.groupId,
    score: owner.score,
    tokens,
    lossMask,
    advantages,
    logprobs,
    policyVersion: Math.min(...sequence.map((call) => call.policyVersion)),
    spans,
  };
}

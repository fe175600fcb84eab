/** Hand-made trajectories with explicit token ids and logprobs, for the training-sample tests. */
import type { Completion, FinishReason } from '../../src/core/completion.ts';
import type { Message } from '../../src/core/messages.ts';
import type { LlmCall, Trajectory, TrajectoryStatus, Turn } from '../../src/core/trajectory.ts';

/** The end-of-turn id the fixtures use (a stand-in for <|im_end|>). */
export const EOT = 99;

export interface CallSpec {
  prompt: number[] | null;
  ids: number[] | null;
  /** Default: −0.1·(position + 1) per completion token, so each position's value is distinct. */
  logprobs?: number[] | null;
  exact?: boolean;
  finishReason?: FinishReason;
  policyVersion?: number;
  messages?: Message[];
  text?: string;
}

export function call(spec: CallSpec): LlmCall {
  const completion: Completion = {
    text: spec.text ?? `ids ${JSON.stringify(spec.ids)}`,
    promptTokenIds: spec.prompt,
    completionTokenIds: spec.ids,
    logprobs: spec.logprobs !== undefined ? spec.logprobs : (spec.ids?.map((_, i) => -0.1 * (i + 1)) ?? null),
    tokenIdsExact: spec.exact ?? true,
    finishReason: spec.finishReason ?? 'stop',
    modelId: 'fixture',
    policyVersion: spec.policyVersion ?? 3,
  };
  return { messages: spec.messages ?? [{ role: 'user', content: 'obs' }], tools: [], completion, latencyMs: 1 };
}

/** A trajectory whose turn k made the calls in calls[k]. */
export function trajectory(
  id: string,
  calls: LlmCall[][],
  o: { reward?: number; status?: TrajectoryStatus; groupId?: string } = {},
): Trajectory {
  const turns: Turn[] = calls.map((turnCalls, index) => ({
    index,
    observation: `obs ${index}`,
    calls: turnCalls,
    actions: [],
    informational: [],
    parseError: null,
    invalid: false,
    feedback: '',
    reward: 0,
    rewardParts: {},
    done: index === calls.length - 1,
    truncated: false,
    info: {},
    timings: { policyMs: 1, envMs: 1 },
  }));
  return {
    id,
    runId: null,
    groupId: o.groupId ?? 'g1',
    env: 'fixture',
    seed: 1,
    sample: 0,
    policy: 'fixture',
    turns,
    messages: [],
    additionalHistories: [],
    reward: o.reward ?? 1,
    rewardParts: {},
    metrics: {},
    status: o.status ?? 'completed',
    statusReason: null,
    policyVersions: [3],
    quality: [],
    startedAt: '2025-01-01T00:00:00.000Z',
    finishedAt: '2025-01-01T00:00:01.000Z',
  };
}

/**
 * A three-turn conversation whose ids are prefix-stable: each prompt is the previous prompt, the
 * previous completion, then the new observation's ids.
 *   turn 0: prompt [1 2 3]                        completion [10 11 EOT]
 *   turn 1: prompt [1 2 3 10 11 EOT 4 5]          completion [12 EOT]
 *   turn 2: prompt [1 2 3 10 11 EOT 4 5 12 EOT 6] completion [13 14 EOT]
 */
export const stablePrompts = {
  p0: [1, 2, 3],
  c0: [10, 11, EOT],
  p1: [1, 2, 3, 10, 11, EOT, 4, 5],
  c1: [12, EOT],
  p2: [1, 2, 3, 10, 11, EOT, 4, 5, 12, EOT, 6],
  c2: [13, 14, EOT],
};

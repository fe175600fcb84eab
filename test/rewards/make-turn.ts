/** Hand-made turns for reward function tests. */
import type { Completion } from '../../src/core/completion.ts';
import type { ToolCall } from '../../src/core/messages.ts';
import type { ParseError, Turn } from '../../src/core/trajectory.ts';

/** A turn whose LLM calls answered `texts` (the last one with `reasoning`, when given). */
export function makeTurn(o: { texts?: string[]; reasoning?: string; actions?: ToolCall[]; parseError?: ParseError | null }): Turn {
  const texts = o.texts ?? [''];
  const completion = (text: string, last: boolean): Completion => ({
    text,
    promptTokenIds: null,
    completionTokenIds: null,
    logprobs: null,
    tokenIdsExact: false,
    finishReason: 'stop',
    ...(last && o.reasoning !== undefined ? { reasoning: o.reasoning } : {}),
    modelId: 'test',
    policyVersion: 0,
  });
  return {
    index: 0,
    observation: 'obs',
    calls: texts.map((text, i) => ({ messages: [], tools: [], completion: completion(text, i === texts.length - 1), latencyMs: 1 })),
    actions: o.actions ?? [],
    informational: [],
    parseError: o.parseError ?? null,
    invalid: false,
    feedback: '',
    reward: 0,
    rewardParts: {},
    done: false,
    truncated: false,
    info: {},
    timings: { policyMs: 1, envMs: 1 },
  };
}

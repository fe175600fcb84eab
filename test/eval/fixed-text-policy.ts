/** A policy that writes the same text at every decision, as an LLM would (no decision view, no action distribution). */
import type { Completion } from '../../src/core/completion.ts';
import type { Policy } from '../../src/policy/policy.ts';

export function fixedTextPolicy(name: string, text: string): Policy {
  const completion: Completion = { text, promptTokenIds: null, completionTokenIds: null, logprobs: null, tokenIdsExact: false, finishReason: 'stop', modelId: name, policyVersion: 0 };
  return {
    name,
    contextLength: null,
    complete: (request) => Promise.resolve(Array.from({ length: request.n ?? 1 }, () => ({ ...completion }))),
  };
}

/** The bandit call that pulls arm `arm` (1-based, as the observation numbers them). */
export function pullText(arm: number): string {
  return `<tool_call>{"name": "pull", "arguments": {"arm": ${arm}}}</tool_call>`;
}

/** What a policy returns for one sampled answer: the text and, when known, exactly what was sampled. */

/** `length`: cut at max tokens; `timeout`: the per-call timeout fired; `error`: the backend failed. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'timeout' | 'error';

export interface Completion {
  text: string;
  /** Token ids of the rendered prompt; null for scripted policies and servers that do not report them. */
  promptTokenIds: number[] | null;
  /** Token ids of the completion; null for scripted policies. */
  completionTokenIds: number[] | null;
  /** Per completion token: logprob under the sampling distribution (after temperature, top-p, top-k). */
  logprobs: number[] | null;
  /**
   * The server's per-token logprobs when they cannot be aligned with `completionTokenIds` (a
   * re-tokenisation of a different length); `logprobs` is null then.
   */
  unalignedLogprobs?: number[];
  /** Per completion token: logprob under the untempered model, when the backend computes it. */
  modelLogprobs?: number[] | null;
  /** True when the ids are what the sampler produced; false when they are a re-tokenisation of the text. */
  tokenIdsExact: boolean;
  finishReason: FinishReason;
  /** Server-side tool calls (OpenAI `tool_calls`), when the backend parsed them itself. */
  toolCalls?: { id?: string; name: string; arguments: string }[];
  /** Reasoning the backend returned separately (e.g. `reasoning_content`). */
  reasoning?: string;
  modelId: string;
  /** The version of the weights that sampled this (0 for scripted policies and fixed models). */
  policyVersion: number;
}

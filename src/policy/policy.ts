/** The Policy contract: scripted baselines, the embedded model and remote servers all answer it. */
import type { Completion } from '../core/completion.ts';
import type { Message, ToolSpec } from '../core/messages.ts';
import type { CallSampling } from '../core/trajectory.ts';
import type { ActionDistribution, DecisionView } from '../envs/env.ts';

export interface SamplingOptions {
  maxTokens: number;
  temperature: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
}

/** The record of what a request asked its sampler for (LlmCall.sampling). */
export function callSampling(options: SamplingOptions): CallSampling {
  const { temperature, maxTokens, topP, topK, stop, seed } = options;
  return {
    temperature,
    maxTokens,
    ...(topP !== undefined ? { topP } : {}),
    ...(topK !== undefined ? { topK } : {}),
    ...(stop !== undefined ? { stop } : {}),
    ...(seed !== undefined ? { seed } : {}),
  };
}

export interface PolicyRequest extends SamplingOptions {
  messages: Message[];
  tools: ToolSpec[];
  /** Number of samples for this prompt (default 1); they share the prompt's prefill. */
  n?: number;
  signal?: AbortSignal;
  /** The decision being made. Scripted policies read it; LLM policies must ignore it. */
  view?: DecisionView;
}

export interface Policy {
  /** The name it is known by everywhere: `random`, `stick-at-17`, `model:DIR`, `openai:MODEL`. */
  readonly name: string;
  /** Context window in tokens, or null when unbounded (scripted policies). */
  readonly contextLength: number | null;
  /**
   * The longest answer this policy is meant to give, when it knows (an embedded checkpoint's
   * generation_config max_new_tokens, which a train run sets to its answer budget): `spindle eval`
   * and `play` use it as the episode's maxTokens unless --max-tokens is given, so a ten-turn episode
   * is not cut off by reserving the default 512 tokens for every answer.
   */
  readonly answerBudget?: number;
  /**
   * Samples it decodes at once, when that is bounded (an embedded model: rows per batch × batches
   * in flight). runRollouts keeps no more episodes in flight than fill it: the others would only
   * wait, and their cached keys would push out those of the episodes whose next turn comes first
   * (kelly's trained policy, 300 ten-turn episodes in flight over 64 rows: ~22 minutes, 7× slower).
   */
  readonly rowsAtOnce?: number;
  complete(request: PolicyRequest): Promise<Completion[]>;
  /** Prompt length in tokens of these messages, for the per-episode context budget. */
  countTokens?(messages: Message[], tools: ToolSpec[]): number;
  /** The exact action distribution at a decision, for policies that have one (exact evaluation). */
  distribution?(view: DecisionView): ActionDistribution;
  /**
   * Frees what it cached from earlier requests (an embedded model's prompt and sequence caches, up
   * to 256 MiB each). evaluatePolicies calls it once a policy has played, so policies evaluated one
   * after another share jax-js's 4 GiB instead of each keeping its caches until the end.
   */
  clearCaches?(): void;
  close?(): Promise<void>;
}

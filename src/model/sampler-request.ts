/** What one generation request asks for, and its validation (every error names the field). */
import { UsageError } from '../core/errors.ts';
import type { ModelConfig } from './config.ts';
import type { TopLogprobs } from './sampler-top.ts';

/** One token of one sample, reported as soon as it is drawn (for streaming). */
export type SampledToken = {
  id: number;
  /** log q under the sampling distribution. */
  logprob: number;
  /** log p under the untempered model. */
  modelLogprob: number;
  /** The `topLogprobs` most likely tokens under p; null when none were asked. */
  top: TopLogprobs | null;
};

export type SampleRequest = {
  promptIds: number[];
  /** Samples of this prompt (default 1); they share its prefill. */
  n?: number;
  maxTokens: number;
  /** 0 = greedy. */
  temperature: number;
  topP?: number;
  /** 0 or undefined = no top-k cut. */
  topK?: number;
  /** Stop strings, searched in the decoded text (needs the sampler's decode). */
  stop?: string[];
  /** Ids that end a sample (kept as its last id); default: the config's eosTokenIds. */
  stopTokenIds?: number[];
  /** Same seed, same samples. */
  seed?: number;
  /** onToken also reports this many most likely tokens (under the untempered model) per token (default 0). */
  topLogprobs?: number;
  /** Called with each sample's tokens as they are drawn; a callback that throws ends that sample. */
  onToken?: (sample: number, token: SampledToken) => void;
  /** Aborting ends the request's samples at the next decode step (the rest of the batch goes on). */
  signal?: AbortSignal;
};

type Hooks = 'seed' | 'onToken' | 'signal';
export type CheckedSampleRequest = Required<Omit<SampleRequest, Hooks>> & Pick<SampleRequest, Hooks>;

function fail(label: string, message: string): never {
  throw new UsageError(`${label}.${message}`);
}

function isTokenList(value: unknown, vocab: number): value is number[] {
  return Array.isArray(value) && value.every((t) => Number.isInteger(t) && t >= 0 && t < vocab);
}

export function validateSampleRequest(request: SampleRequest, cfg: ModelConfig, label = 'request'): CheckedSampleRequest {
  const r = request as Partial<Record<keyof SampleRequest, unknown>>;
  const vocab = cfg.vocabSize;
  if (!isTokenList(r.promptIds, vocab) || r.promptIds.length === 0) {
    fail(label, `promptIds must be a non-empty list of token ids in [0, ${vocab})`);
  }
  if (r.promptIds.length >= cfg.maxPositionEmbeddings) {
    fail(label, `promptIds has ${r.promptIds.length} tokens; the model's context is ${cfg.maxPositionEmbeddings}, which leaves no room to generate`);
  }
  const n = r.n ?? 1;
  if (!Number.isInteger(n) || (n as number) < 1) fail(label, `n must be a positive integer, got ${String(r.n)}`);
  if (!Number.isInteger(r.maxTokens) || (r.maxTokens as number) < 1) fail(label, `maxTokens must be a positive integer, got ${String(r.maxTokens)}`);
  if (typeof r.temperature !== 'number' || !(r.temperature >= 0) || !Number.isFinite(r.temperature)) {
    fail(label, `temperature must be a finite number >= 0, got ${String(r.temperature)}`);
  }
  const topP = r.topP ?? 1;
  if (typeof topP !== 'number' || !(topP > 0 && topP <= 1)) fail(label, `topP must be in (0, 1], got ${String(r.topP)}`);
  const topK = r.topK ?? 0;
  if (!Number.isInteger(topK) || (topK as number) < 0) fail(label, `topK must be an integer >= 0, got ${String(r.topK)}`);
  const stop = r.stop ?? [];
  if (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string' && s.length > 0)) {
    fail(label, 'stop must be a list of non-empty strings');
  }
  const stopTokenIds = r.stopTokenIds ?? cfg.eosTokenIds;
  if (!isTokenList(stopTokenIds, vocab)) fail(label, `stopTokenIds must be token ids in [0, ${vocab})`);
  if (r.seed !== undefined && !(Number.isSafeInteger(r.seed) && (r.seed as number) >= 0)) {
    fail(label, `seed must be a non-negative integer, got ${String(r.seed)}`);
  }
  const topLogprobs = r.topLogprobs ?? 0;
  if (!Number.isInteger(topLogprobs) || (topLogprobs as number) < 0 || (topLogprobs as number) > vocab) {
    fail(label, `topLogprobs must be an integer in [0, ${vocab}], got ${String(r.topLogprobs)}`);
  }
  if (r.onToken !== undefined && typeof r.onToken !== 'function') fail(label, 'onToken must be a function');
  return {
    promptIds: r.promptIds,
    n: n as number,
    maxTokens: r.maxTokens as number,
    temperature: r.temperature,
    topP,
    topK: topK as number,
    stop: stop as string[],
    stopTokenIds,
    seed: r.seed as number | undefined,
    topLogprobs: topLogprobs as number,
    onToken: request.onToken,
    signal: request.signal,
  };
}

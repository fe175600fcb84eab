/**
 * The embedded model as a Policy: messages and tools go through the checkpoint's chat template, the
 * tokenizer encodes the prompt, the KV-cached sampler samples, and the completion carries exactly
 * what was sampled (ids through the end-of-turn token, sampling and model logprobs). Concurrent
 * complete() calls from many episodes are batched into one decode.
 */
import type { Completion } from '../core/completion.ts';
import { UsageError } from '../core/errors.ts';
import type { Message, ToolSpec } from '../core/messages.ts';
import type { ChatTemplate } from '../model/chat-template.ts';
import type { ModelConfig } from '../model/config.ts';
import { tree } from '../model/engine.ts';
import type { Params } from '../model/params.ts';
import { PrefixCache } from '../model/prefix-cache.ts';
import { validateSampleRequest, type SampleRequest } from '../model/sampler-request.ts';
import { Sampler, type SampledToken, type SampleResult } from '../model/sampler.ts';
import type { Tokenizer } from '../model/tokenizer/tokenizer.ts';
import { RequestBatcher } from './embedded-batcher.ts';
import type { Policy, PolicyRequest } from './policy.ts';
import { untilAborted } from '../core/abortable.ts';

export type EmbeddedModel = {
  cfg: ModelConfig;
  /** The policy takes its own reference to these arrays; the caller keeps (and disposes) theirs. */
  params: Params;
  tokenizer: Tokenizer;
  chatTemplate: ChatTemplate;
  /** Ids that end a turn (the checkpoint's eos / end-of-turn ids). */
  stopTokenIds: number[];
  /** `model:DIR` etc. */
  name: string;
  /** Reported as Completion.modelId. */
  modelId: string;
  policyVersion?: number;
  /** Extra chat-template variables, e.g. `{ enable_thinking: false }`. */
  templateExtra?: Record<string, unknown>;
  /** Policy.answerBudget (generation_config max_new_tokens). */
  answerBudget?: number;
};

export type EmbeddedPolicyOptions = {
  /** Rows (samples) per decode batch (default 64). */
  maxBatchRows?: number;
  /** Decode batches in flight at once (default 2). */
  maxConcurrentBatches?: number;
  /** Slots per KV-cache block (default 32). */
  blockSize?: number;
  /** Seeds requests that carry no seed. */
  seed?: number;
};

/** Extras for a caller that streams (e.g. `spindle serve`); Policy callers need none. */
export type CompletionHooks = {
  /** Called when the request's batch starts, with the weights version that will sample it. */
  onStart?: (policyVersion: number) => void;
  /** Each sample's tokens as they are drawn (sample = its index among the request's n). */
  onToken?: (sample: number, token: SampledToken) => void;
  /** Most likely tokens (under the untempered model) reported per token through onToken. */
  topLogprobs?: number;
};

type Job = { request: SampleRequest; promptIds: number[]; onStart?: (policyVersion: number) => void };
/** A request's samples and the weights version that produced them (read when its batch starts). */
type JobResult = { samples: SampleResult[]; version: number };

export class EmbeddedPolicy implements Policy {
  readonly name: string;
  readonly contextLength: number;
  readonly answerBudget: number | undefined;
  readonly rowsAtOnce: number;
  private readonly sampler: Sampler;
  private readonly batcher: RequestBatcher<Job, JobResult>;
  private params: Params;
  private version: number;
  private closed = false;

  constructor(
    private readonly model: EmbeddedModel,
    options: EmbeddedPolicyOptions = {},
  ) {
    this.name = model.name;
    this.contextLength = model.cfg.maxPositionEmbeddings;
    this.answerBudget = model.answerBudget;
    this.params = tree.ref(model.params);
    this.version = model.policyVersion ?? 0;
    // (@huggingface/tokenizers rejects an empty id list.)
    const decode = (ids: number[]) => (ids.length === 0 ? '' : model.tokenizer.decode(ids, { skipSpecialTokens: true }));
    this.sampler = new Sampler(model.cfg, this.params, { decode, blockSize: options.blockSize, prefixCache: new PrefixCache(), seed: options.seed });
    const maxRows = options.maxBatchRows ?? 64;
    const maxConcurrent = options.maxConcurrentBatches ?? 2;
    this.rowsAtOnce = maxRows * maxConcurrent;
    this.batcher = new RequestBatcher((jobs) => this.runJobs(jobs), { maxRows, maxConcurrent, rowsOf: (job) => job.request.n ?? 1 });
  }

  private async runJobs(jobs: Job[]): Promise<JobResult[]> {
    // generate() holds the weights it starts with; the version is read at the same moment.
    const version = this.version;
    for (const job of jobs) job.onStart?.(version);
    const results = await this.sampler.generate(jobs.map((j) => j.request));
    return results.map((samples) => ({ samples, version }));
  }

  get policyVersion(): number {
    return this.version;
  }

  /** Batches run so far (requests per batch). */
  get batchSizes(): readonly number[] {
    return this.batcher.batchSizes;
  }

  /** New weights (e.g. after a training step): later batches sample with them and report `version`. */
  updateWeights(params: Params, version: number): void {
    const previous = this.params;
    this.params = tree.ref(params);
    this.version = version;
    this.sampler.setParams(this.params);
    // Batches in flight hold their own references to the previous arrays.
    tree.dispose(previous);
  }

  /**
   * Drops the sampler's cached prefixes and sequences. A prompt computed from the cache rounds
   * differently from one computed whole (other batch shapes), so a caller whose samples must not
   * depend on what this policy sampled before clears them: the trainer, at the start of each step's
   * rollouts (rlStep), as a run resumed at that step starts. evaluatePolicies clears them once the
   * policy has played, to free their memory for the next policy.
   */
  clearCaches(): void {
    this.sampler.clearCaches();
  }

  /** The prompt exactly as the model sees it: template render with the generation prompt, encoded. */
  promptIds(messages: Message[], tools: ToolSpec[]): number[] {
    const text = this.model.chatTemplate.render(messages, { tools, addGenerationPrompt: true, extra: this.model.templateExtra });
    return this.model.tokenizer.encode(text, { addSpecialTokens: false });
  }

  countTokens(messages: Message[], tools: ToolSpec[]): number {
    return this.promptIds(messages, tools).length;
  }

  async complete(request: PolicyRequest, hooks: CompletionHooks = {}): Promise<Completion[]> {
    if (this.closed) throw new Error(`${this.name}: policy is closed`);
    request.signal?.throwIfAborted();
    const promptIds = this.promptIds(request.messages, request.tools);
    if (promptIds.length >= this.contextLength) {
      throw new UsageError(`${this.name}: the prompt has ${promptIds.length} tokens, the model's context is ${this.contextLength}`);
    }
    const sample: SampleRequest = {
      promptIds,
      n: request.n ?? 1,
      maxTokens: request.maxTokens,
      temperature: request.temperature,
      topP: request.topP,
      topK: request.topK,
      stop: request.stop,
      stopTokenIds: this.model.stopTokenIds,
      seed: request.seed,
      topLogprobs: hooks.topLogprobs,
      onToken: hooks.onToken,
      signal: request.signal,
    };
    validateSampleRequest(sample, this.model.cfg, this.name); // a bad request fails alone, not its batch
    const pending = this.batcher.submit({ request: sample, promptIds, onStart: hooks.onStart });
    const { samples, version } = request.signal ? await untilAborted(pending, request.signal) : await pending;
    return samples.map((r) => this.toCompletion(promptIds, r, version));
  }

  private toCompletion(promptIds: number[], r: SampleResult, version: number): Completion {
    return {
      text: r.text ?? '',
      promptTokenIds: promptIds,
      completionTokenIds: r.tokenIds,
      logprobs: r.logprobs,
      modelLogprobs: r.modelLogprobs,
      tokenIdsExact: true,
      finishReason: r.finishReason,
      modelId: this.model.modelId,
      policyVersion: version,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.batcher.idle();
    this.sampler.dispose();
    tree.dispose(this.params);
  }
}

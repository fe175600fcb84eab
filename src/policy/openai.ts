/**
 * `--policy openai:MODEL`: any OpenAI-compatible chat-completions server (vLLM, SGLang, llama.cpp,
 * Ollama, a hosted API, `spindle serve`) through the official `openai` client. Token ids are taken
 * from the response where the server reports them (vLLM's fields); otherwise the completion is marked
 * `tokenIdsExact: false` and counted, and its ids are either null or, with a `tokenizer` (`--tokenizer
 * DIR`), a re-tokenisation of the messages and the answer (openai-retokenize.ts), counted apart. Calls are limited in number, retried with
 * backoff on 429, 5xx, connection errors and timeouts, and accounted (latency, tokens, retries).
 */
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { Completion, FinishReason } from '../core/completion.ts';
import { ConcurrencyLimiter } from './openai-limiter.ts';
import { toOpenAIMessages, toOpenAITools } from './openai-messages.ts';
import { retokenizeCompletion, retokenizePrompt, type RetokenizerAssets } from './openai-retokenize.ts';
import { completionTokenIdsOf, promptTokenIdsOf } from './openai-tokens.ts';
import type { Policy, PolicyRequest } from './policy.ts';

export const POLICY_VERSION_HEADER = 'x-spindle-policy-version';

export interface OpenAIPolicyOptions {
  model: string;
  baseURL: string;
  apiKey?: string;
  /** Calls in flight at once (default 16). */
  maxConcurrency?: number;
  /** Retries after the first try on 429, 5xx, connection errors and timeouts (default 4). */
  maxRetries?: number;
  /** Per-try timeout (default 120 s). */
  timeoutMs?: number;
  /** First backoff delay; doubles per retry, capped at 8 s (default 250 ms). A Retry-After header wins. */
  backoffMs?: number;
  /** Send `tools` to the server and read its `tool_calls` (default false: the agent loop renders tools itself). */
  serverTools?: boolean;
  /** The context window when known (for the episode budget); default null (unknown). */
  contextLength?: number | null;
  /** Re-tokenises completions the server reports no ids for (the model's tokenizer and chat template). */
  tokenizer?: RetokenizerAssets;
}

export interface OpenAIPolicyStats {
  calls: number;
  failedCalls: number;
  retries: number;
  promptTokens: number;
  completionTokens: number;
  /** Completions whose token ids the server did not report (ids null, tokenIdsExact false). */
  inexactCompletions: number;
  /** Of those, completions whose ids were re-tokenised with `tokenizer` (approximate, still tokenIdsExact false). */
  approximateCompletions: number;
  /** Of those, completions the tokenizer's chat template could not render (ids left null). */
  retokenizeFailures: number;
  /** Re-tokenised completions whose id count differs from the server's logprob count (logprobs kept apart). */
  unalignedLogprobs: number;
  /** Per successful call, milliseconds including retries. */
  latenciesMs: number[];
}

/** vLLM's request extensions; a server that rejects them (400) is asked again without them, once for all. */
const VLLM_EXTRAS = { return_tokens_as_token_ids: true, return_token_ids: true };

export class OpenAIPolicy implements Policy {
  readonly name: string;
  readonly contextLength: number | null;
  readonly stats: OpenAIPolicyStats = { calls: 0, failedCalls: 0, retries: 0, promptTokens: 0, completionTokens: 0, inexactCompletions: 0, approximateCompletions: 0, retokenizeFailures: 0, unalignedLogprobs: 0, latenciesMs: [] };
  private readonly client: OpenAI;
  private readonly limiter: ConcurrencyLimiter;
  private useExtras = true;

  constructor(private readonly options: OpenAIPolicyOptions) {
    this.name = `openai:${options.model}`;
    this.contextLength = options.contextLength ?? null;
    // Our own retry loop (counted); the client's is off.
    this.client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey ?? 'none', maxRetries: 0, timeout: options.timeoutMs ?? 120_000 });
    this.limiter = new ConcurrencyLimiter(options.maxConcurrency ?? 16);
  }

  async complete(request: PolicyRequest): Promise<Completion[]> {
    return this.limiter.run(async () => {
      const start = performance.now();
      this.stats.calls++;
      try {
        const { data, version } = await this.callWithRetries(request);
        this.stats.latenciesMs.push(performance.now() - start);
        this.stats.promptTokens += data.usage?.prompt_tokens ?? 0;
        this.stats.completionTokens += data.usage?.completion_tokens ?? 0;
        return data.choices.map((choice) => this.withApproximateIds(request, this.toCompletion(data, choice, version)));
      } catch (error) {
        this.stats.failedCalls++;
        throw error;
      }
    });
  }

  private body(request: PolicyRequest): ChatCompletionCreateParamsNonStreaming {
    const body: ChatCompletionCreateParamsNonStreaming & Record<string, unknown> = {
      model: this.options.model,
      messages: toOpenAIMessages(request.messages),
      n: request.n ?? 1,
      temperature: request.temperature,
      max_tokens: request.maxTokens,
      logprobs: true,
    };
    if (request.topP !== undefined) body.top_p = request.topP;
    if (request.stop && request.stop.length > 0) body.stop = request.stop;
    if (request.seed !== undefined) body.seed = request.seed;
    if (this.options.serverTools && request.tools.length > 0) body.tools = toOpenAITools(request.tools);
    if (this.useExtras) {
      Object.assign(body, VLLM_EXTRAS);
      if (request.topK !== undefined) body.top_k = request.topK;
    }
    return body;
  }

  private async callWithRetries(request: PolicyRequest): Promise<{ data: ChatCompletion; version: number | null }> {
    const maxRetries = this.options.maxRetries ?? 4;
    for (let attempt = 0; ; attempt++) {
      request.signal?.throwIfAborted();
      try {
        const { data, response } = await this.client.chat.completions.create(this.body(request), { signal: request.signal }).withResponse();
        return { data, version: parseVersion(response.headers.get(POLICY_VERSION_HEADER)) };
      } catch (error) {
        if (this.useExtras && error instanceof OpenAI.BadRequestError && /return_token|token_id|unrecognized|unknown|extra/i.test(error.message)) {
          this.useExtras = false; // not vLLM: ask plainly, without counting a retry
          attempt--;
          continue;
        }
        if (attempt >= maxRetries || !retryable(error) || request.signal?.aborted) throw error;
        this.stats.retries++;
        await sleep(this.backoff(attempt, error), request.signal);
      }
    }
  }

  private backoff(attempt: number, error: unknown): number {
    const after = error instanceof OpenAI.APIError ? Number(error.headers?.get('retry-after')) : NaN;
    if (Number.isFinite(after) && after >= 0) return Math.min(after * 1000, 30_000);
    return Math.min((this.options.backoffMs ?? 250) * 2 ** attempt, 8_000);
  }

  /** The tools the server was sent (and so rendered into its prompt). */
  private sentTools(request: PolicyRequest): PolicyRequest['tools'] {
    return this.options.serverTools ? request.tools : [];
  }

  /**
   * A completion without server ids, re-tokenised when a tokenizer is configured. The server's
   * logprobs stay on `logprobs` only when they are as many as the re-tokenised ids; otherwise they
   * move to `unalignedLogprobs` and `logprobs` is null (no logprob is paired with the wrong token).
   */
  private withApproximateIds(request: PolicyRequest, completion: Completion): Completion {
    const assets = this.options.tokenizer;
    if (completion.tokenIdsExact || !assets) return completion;
    const tools = this.sentTools(request);
    let promptTokenIds: number[];
    let completionTokenIds: number[];
    try {
      promptTokenIds = completion.promptTokenIds ?? retokenizePrompt(assets, request.messages, tools);
      completionTokenIds = completion.completionTokenIds ?? retokenizeCompletion(assets, request.messages, tools, completion);
    } catch {
      this.stats.retokenizeFailures++;
      return completion;
    }
    this.stats.approximateCompletions++;
    const { logprobs } = completion;
    if (logprobs === null || logprobs.length === completionTokenIds.length) return { ...completion, promptTokenIds, completionTokenIds };
    this.stats.unalignedLogprobs++;
    return { ...completion, promptTokenIds, completionTokenIds, logprobs: null, unalignedLogprobs: logprobs };
  }

  private toCompletion(data: ChatCompletion, choice: ChatCompletion.Choice, headerVersion: number | null): Completion {
    const content = choice.logprobs?.content ?? null;
    const promptTokenIds = promptTokenIdsOf(data, choice);
    const completionTokenIds = completionTokenIdsOf(choice, content ? content.map((c) => c.token) : null);
    const tokenIdsExact = promptTokenIds !== null && completionTokenIds !== null;
    if (!tokenIdsExact) this.stats.inexactCompletions++;
    const toolCalls = (choice.message.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : []));
    const reasoning = (choice.message as { reasoning_content?: unknown }).reasoning_content;
    const bodyVersion = parseVersion((data as { policy_version?: unknown }).policy_version);
    return {
      text: choice.message.content ?? '',
      promptTokenIds,
      completionTokenIds,
      logprobs: content ? content.map((c) => c.logprob) : null,
      tokenIdsExact,
      finishReason: finishReason(choice.finish_reason),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      ...(typeof reasoning === 'string' && reasoning.length > 0 ? { reasoning } : {}),
      modelId: data.model,
      policyVersion: headerVersion ?? bodyVersion ?? 0,
    };
  }
}

/**
 * The model's context window as the server lists it (`max_model_len` in /v1/models, as vLLM and
 * `spindle serve` report it), or null when the server does not say or cannot be asked.
 */
export async function serverContextLength(baseURL: string, apiKey: string | undefined, model: string): Promise<number | null> {
  const client = new OpenAI({ baseURL, apiKey: apiKey ?? 'none', maxRetries: 0, timeout: 5_000 });
  try {
    const listed = (await client.models.list()).data.find((m) => m.id === model) as { max_model_len?: unknown } | undefined;
    const n = listed?.max_model_len;
    return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

function parseVersion(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : null;
}

function finishReason(reason: string | null): FinishReason {
  if (reason === 'length') return 'length';
  if (reason === 'tool_calls' || reason === 'function_call') return 'tool_calls';
  if (reason === 'content_filter') return 'error';
  return 'stop';
}

function retryable(error: unknown): boolean {
  if (error instanceof OpenAI.APIUserAbortError) return false;
  if (error instanceof OpenAI.APIConnectionError) return true; // includes APIConnectionTimeoutError
  if (error instanceof OpenAI.APIError) return error.status === 408 || error.status === 429 || (error.status !== undefined && error.status >= 500);
  return false;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

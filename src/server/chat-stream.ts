/**
 * One streamed chat completion as server-sent events, written while the sampler decodes: a role
 * chunk per choice when the batch starts (the first carrying vLLM's `prompt_token_ids`), then a chunk
 * per sampled token with its text delta, its `token_ids` and its logprobs, then per choice the rest
 * of the text or its `tool_calls` (a call is only known once the whole answer is parsed, so text is
 * streamed up to `<tool_call>` and the call follows as one delta, as vLLM does without a streaming
 * tool parser), a finish chunk, usage when asked, and `[DONE]`.
 */
import type { ServerResponse } from 'node:http';
import type { Completion } from '../core/completion.ts';
import type { SampledToken } from '../model/sampler.ts';
import { POLICY_VERSION_HEADER } from '../policy/openai.ts';
import { logprobEntry } from './chat-logprobs.ts';
import { finish, message, type ResponseSettings } from './chat-response.ts';
import { TextDelta } from './chat-text-delta.ts';
import type { ApiError } from './errors.ts';

const TOOL_CALL_MARKER = '<tool_call>';

export type ChatStreamOptions = {
  n: number;
  promptIds: number[];
  includeUsage: boolean;
  /** The request's stop strings: text that may turn into one is held back until it cannot. */
  stop: string[];
};

export class ChatStream {
  private head: Record<string, unknown> | null = null;
  private readonly ids: number[][];
  private readonly texts: TextDelta[];

  constructor(
    private readonly raw: ServerResponse,
    private readonly s: ResponseSettings,
    private readonly options: ChatStreamOptions,
  ) {
    const decode = (ids: number[]) => s.tokenizer.decode(ids, { skipSpecialTokens: true });
    const markers = s.tools.length > 0 ? [...options.stop, TOOL_CALL_MARKER] : options.stop;
    this.ids = Array.from({ length: options.n }, () => []);
    this.texts = Array.from({ length: options.n }, () => new TextDelta(decode, markers));
  }

  get started(): boolean {
    return this.head !== null;
  }

  /** The batch started with weights `policyVersion`: headers and one role chunk per choice. */
  start(policyVersion: number): void {
    this.head = { id: this.s.id, object: 'chat.completion.chunk', created: this.s.created, model: this.s.model, policy_version: policyVersion };
    this.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', [POLICY_VERSION_HEADER]: String(policyVersion) });
    for (let index = 0; index < this.options.n; index++) {
      const promptIds = index === 0 && this.s.tokenIds ? { prompt_token_ids: this.options.promptIds } : {};
      this.send({ choices: [{ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], ...promptIds });
    }
  }

  token(index: number, token: SampledToken): void {
    const ids = this.ids[index];
    ids.push(token.id);
    const content = this.texts[index].push(ids);
    const logprobs = this.s.logprobs ? { content: [logprobEntry(token.id, token.logprob, token.top, this.s)] } : null;
    this.send({ choices: [{ index, delta: { content }, logprobs, finish_reason: null, ...(this.s.tokenIds ? { token_ids: [token.id] } : {}) }] });
  }

  /** The sampled answers: each choice's remaining text or tool calls, finish reasons, usage, [DONE]. */
  end(completions: Completion[]): void {
    completions.forEach((c, index) => {
      const { toolCalls } = message(c, this.s.tools);
      if (toolCalls.length > 0) {
        this.send({ choices: [{ index, delta: { tool_calls: toolCalls.map((t, i) => ({ index: i, ...t })) }, logprobs: null, finish_reason: null }] });
      } else {
        const rest = this.texts[index].finish(c.text);
        if (rest.length > 0) this.send({ choices: [{ index, delta: { content: rest }, logprobs: null, finish_reason: null }] });
      }
      this.send({ choices: [{ index, delta: {}, logprobs: null, finish_reason: finish(c, toolCalls) }] });
    });
    if (this.options.includeUsage) {
      const promptTokens = this.options.promptIds.length;
      const completionTokens = completions.reduce((sum, c) => sum + (c.completionTokenIds?.length ?? 0), 0);
      this.send({ choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens } });
    }
    if (!this.raw.destroyed) this.raw.end('data: [DONE]\n\n');
  }

  /** Sampling failed after the stream started: an OpenAI-style error event, then the end. */
  fail(error: ApiError): void {
    if (this.raw.destroyed) return;
    this.raw.end(`data: ${JSON.stringify(error.body())}\n\n`);
  }

  private send(chunk: object): void {
    if (this.raw.destroyed || this.head === null) return;
    this.raw.write(`data: ${JSON.stringify({ ...this.head, ...chunk })}\n\n`);
  }
}

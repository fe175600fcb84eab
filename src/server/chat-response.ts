/** Completions as OpenAI chat-completion choices (vLLM's token-id fields when asked); chat-stream.ts streams them. */
import { parseCompletion } from '../agent/parse-tool-calls.ts';
import type { Completion } from '../core/completion.ts';
import type { ToolSpec } from '../core/messages.ts';
import type { TopLogprobs } from '../model/sampler-top.ts';
import type { Tokenizer } from '../model/tokenizer/tokenizer.ts';
import { logprobEntries } from './chat-logprobs.ts';

export interface ResponseSettings {
  id: string;
  created: number;
  model: string;
  tools: ToolSpec[];
  logprobs: boolean;
  /** vLLM's `return_tokens_as_token_ids`: logprob tokens written `token_id:N`. */
  tokensAsIds: boolean;
  /** Add `prompt_token_ids` and per-choice `token_ids`. */
  tokenIds: boolean;
  tokenizer: Tokenizer;
}

export type ToolCallOut = { id: string; type: 'function'; function: { name: string; arguments: string } };

/** Content and tool calls: `<tool_call>` blocks are turned into `tool_calls` when the request offered tools. */
export function message(c: Completion, tools: ToolSpec[]): { content: string | null; toolCalls: ToolCallOut[] } {
  if (tools.length === 0) return { content: c.text, toolCalls: [] };
  const parsed = parseCompletion({ text: c.text }, tools);
  if (parsed.error || parsed.calls.length === 0) return { content: c.text, toolCalls: [] };
  const toolCalls = parsed.calls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.arguments) } }));
  return { content: parsed.content.length > 0 ? parsed.content : null, toolCalls };
}

export function finish(c: Completion, toolCalls: ToolCallOut[]): string {
  if (c.finishReason === 'length') return 'length';
  return toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

/** `tops[i]`: per token of choice i, its top logprobs (when the request set top_logprobs). */
export function chatCompletionBody(completions: Completion[], s: ResponseSettings, tops: (TopLogprobs[] | null)[] = []) {
  const promptIds = completions[0]?.promptTokenIds ?? [];
  const completionTokens = completions.reduce((sum, c) => sum + (c.completionTokenIds?.length ?? 0), 0);
  return {
    id: s.id,
    object: 'chat.completion',
    created: s.created,
    model: s.model,
    policy_version: completions[0]?.policyVersion ?? 0,
    choices: completions.map((c, index) => {
      const { content, toolCalls } = message(c, s.tools);
      const ids = c.completionTokenIds ?? [];
      return {
        index,
        message: { role: 'assistant', content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        logprobs: s.logprobs ? { content: logprobEntries(ids, c.logprobs ?? [], tops[index] ?? null, s) } : null,
        finish_reason: finish(c, toolCalls),
        ...(s.tokenIds ? { token_ids: ids } : {}),
      };
    }),
    usage: { prompt_tokens: promptIds.length, completion_tokens: completionTokens, total_tokens: promptIds.length + completionTokens },
    ...(s.tokenIds ? { prompt_token_ids: promptIds } : {}),
  };
}

/** Completions as OpenAI chat-completion choices (vLLM's token-id fields when asked) and as SSE chunks. */
import { parseCompletion } from '../agent/parse-tool-calls.ts';
import type { Completion } from '../core/completion.ts';
import type { ToolSpec } from '../core/messages.ts';
import type { Tokenizer } from '../model/tokenizer/tokenizer.ts';

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

type ToolCallOut = { id: string; type: 'function'; function: { name: string; arguments: string } };

/** Content and tool calls: `<tool_call>` blocks are turned into `tool_calls` when the request offered tools. */
function message(c: Completion, tools: ToolSpec[]): { content: string | null; toolCalls: ToolCallOut[] } {
  if (tools.length === 0) return { content: c.text, toolCalls: [] };
  const parsed = parseCompletion({ text: c.text }, tools);
  if (parsed.error || parsed.calls.length === 0) return { content: c.text, toolCalls: [] };
  const toolCalls = parsed.calls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.arguments) } }));
  return { content: parsed.content.length > 0 ? parsed.content : null, toolCalls };
}

function tokenText(id: number, s: ResponseSettings): string {
  return s.tokensAsIds ? `token_id:${id}` : s.tokenizer.decode([id]);
}

function logprobEntries(ids: number[], logprobs: number[], s: ResponseSettings) {
  return ids.map((id, i) => {
    const token = tokenText(id, s);
    // Alternatives are not computed by the sampler: top_logprobs is always empty.
    return { token, logprob: logprobs[i], bytes: [...Buffer.from(token, 'utf8')], top_logprobs: [] };
  });
}

function finish(c: Completion, toolCalls: ToolCallOut[]): string {
  if (c.finishReason === 'length') return 'length';
  return toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

export function chatCompletionBody(completions: Completion[], s: ResponseSettings) {
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
        logprobs: s.logprobs ? { content: logprobEntries(ids, c.logprobs ?? [], s) } : null,
        finish_reason: finish(c, toolCalls),
        ...(s.tokenIds ? { token_ids: ids } : {}),
      };
    }),
    usage: { prompt_tokens: promptIds.length, completion_tokens: completionTokens, total_tokens: promptIds.length + completionTokens },
    ...(s.tokenIds ? { prompt_token_ids: promptIds } : {}),
  };
}

/**
 * The chunks of a streamed answer (without the `data:` framing): a role chunk per choice, one content
 * chunk per sampled token (text split where the token decodes), a finish chunk, and usage when asked.
 * The sampler decodes whole answers, so chunks are produced after the answer is complete.
 */
export function chatCompletionChunks(completions: Completion[], s: ResponseSettings, includeUsage: boolean): object[] {
  const head = { id: s.id, object: 'chat.completion.chunk', created: s.created, model: s.model, policy_version: completions[0]?.policyVersion ?? 0 };
  const chunks: object[] = [];
  completions.forEach((c, index) => {
    chunks.push({ ...head, choices: [{ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    const { content, toolCalls } = message(c, s.tools);
    const ids = c.completionTokenIds ?? [];
    const entries = s.logprobs ? logprobEntries(ids, c.logprobs ?? [], s) : null;
    if (toolCalls.length > 0) {
      chunks.push({
        ...head,
        choices: [{
          index,
          delta: { content, tool_calls: toolCalls.map((t, i) => ({ index: i, ...t })) },
          logprobs: entries ? { content: entries } : null,
          finish_reason: null,
          ...(s.tokenIds ? { token_ids: ids } : {}),
        }],
      });
    } else {
      const text = c.text;
      let sent = 0;
      ids.forEach((id, i) => {
        const decoded = i === ids.length - 1 ? text : s.tokenizer.decode(ids.slice(0, i + 1), { skipSpecialTokens: true });
        // A stop string can cut the text inside a token: never send past the final text.
        const upTo = text.startsWith(decoded) ? decoded.length : sent;
        const piece = text.slice(sent, Math.max(sent, upTo));
        sent = Math.max(sent, upTo);
        chunks.push({
          ...head,
          choices: [{
            index,
            delta: { content: piece },
            logprobs: entries ? { content: [entries[i]] } : null,
            finish_reason: null,
            ...(s.tokenIds ? { token_ids: [id] } : {}),
          }],
        });
      });
      if (sent < text.length) chunks.push({ ...head, choices: [{ index, delta: { content: text.slice(sent) }, logprobs: null, finish_reason: null }] });
    }
    chunks.push({ ...head, choices: [{ index, delta: {}, logprobs: null, finish_reason: finish(c, toolCalls) }] });
  });
  if (includeUsage) {
    const body = chatCompletionBody(completions, { ...s, logprobs: false, tokenIds: false });
    chunks.push({ ...head, choices: [], usage: body.usage, ...(s.tokenIds ? { prompt_token_ids: completions[0]?.promptTokenIds ?? [] } : {}) });
  }
  return chunks;
}

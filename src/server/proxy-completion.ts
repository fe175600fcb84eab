/**
 * An upstream chat response (or one rebuilt from its stream) → one Completion and assistant Message
 * per choice. Token ids are taken only from what the upstream reports (vLLM: top-level
 * `prompt_token_ids`, per-choice `token_ids`, or logprob tokens `token_id:N` under
 * `return_tokens_as_token_ids`); without them ids are null and tokenIdsExact false.
 */
import type { Completion, FinishReason } from '../core/completion.ts';
import type { Message } from '../core/messages.ts';
import { toToolCalls } from './proxy-messages.ts';

export interface WireChoice {
  index?: number;
  message?: {
    content?: string | null;
    reasoning_content?: string | null;
    reasoning?: string | null;
    tool_calls?: { id?: string; function: { name: string; arguments?: string } }[] | null;
  };
  finish_reason?: string | null;
  logprobs?: { content?: { token: string; logprob: number }[] | null } | null;
  token_ids?: number[] | null;
}

export interface WireResponse {
  model?: string;
  choices?: WireChoice[];
  prompt_token_ids?: number[] | null;
  /** The weights version, for servers that report one (Spindle's `serve`). */
  policy_version?: number;
}

export interface RecordedChoice {
  completion: Completion;
  /** The assistant message the agent received. */
  message: Message;
}

const FINISH: Record<string, FinishReason> = { stop: 'stop', length: 'length', tool_calls: 'tool_calls', function_call: 'tool_calls' };

const isIdList = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => Number.isInteger(x) && x >= 0);

/** `token_id:N` logprob tokens (vLLM `return_tokens_as_token_ids`) → N, or null when any token is plain text. */
function idsFromLogprobTokens(content: readonly { token: string }[]): number[] | null {
  const ids: number[] = [];
  for (const { token } of content) {
    const match = /^token_id:(\d+)$/.exec(token);
    if (!match) return null;
    ids.push(Number(match[1]));
  }
  return ids;
}

function toCompletion(response: WireResponse, choice: WireChoice, modelFallback: string): Completion {
  const m = choice.message ?? {};
  const logprobContent = choice.logprobs?.content ?? null;
  const logprobs = logprobContent && logprobContent.every((e) => Number.isFinite(e.logprob)) ? logprobContent.map((e) => e.logprob) : null;
  const completionIds = isIdList(choice.token_ids) ? choice.token_ids : logprobContent ? idsFromLogprobTokens(logprobContent) : null;
  const promptIds = isIdList(response.prompt_token_ids) ? response.prompt_token_ids : null;
  const completion: Completion = {
    text: m.content ?? '',
    promptTokenIds: promptIds,
    completionTokenIds: completionIds,
    logprobs,
    tokenIdsExact: promptIds !== null && completionIds !== null,
    finishReason: FINISH[choice.finish_reason ?? ''] ?? 'stop',
    modelId: response.model ?? modelFallback,
    policyVersion: Number.isInteger(response.policy_version) && (response.policy_version ?? -1) >= 0 ? (response.policy_version as number) : 0,
  };
  const reasoning = m.reasoning_content ?? m.reasoning;
  if (reasoning) completion.reasoning = reasoning;
  if (m.tool_calls && m.tool_calls.length > 0) {
    completion.toolCalls = m.tool_calls.map((c) => ({ ...(c.id ? { id: c.id } : {}), name: c.function.name, arguments: c.function.arguments ?? '' }));
  }
  return completion;
}

function toAssistantMessage(choice: WireChoice): Message {
  const m = choice.message ?? {};
  const message: Message = { role: 'assistant', content: m.content ?? '' };
  const reasoning = m.reasoning_content ?? m.reasoning;
  if (reasoning) message.reasoning = reasoning;
  if (m.tool_calls && m.tool_calls.length > 0) message.toolCalls = toToolCalls(m.tool_calls);
  return message;
}

/** The response's choices in index order; a response without choices yields none. */
export function recordChoices(response: WireResponse, modelFallback: string): RecordedChoice[] {
  const choices = [...(response.choices ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  return choices.map((choice) => ({ completion: toCompletion(response, choice, modelFallback), message: toAssistantMessage(choice) }));
}

/** What is recorded for a call that got no answer: the upstream's error, a lost connection. */
export function failedCompletion(modelId: string): Completion {
  return {
    text: '',
    promptTokenIds: null,
    completionTokenIds: null,
    logprobs: null,
    tokenIdsExact: false,
    finishReason: 'error',
    modelId,
    policyVersion: 0,
  };
}

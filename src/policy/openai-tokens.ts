/**
 * Token ids in an OpenAI-compatible response, where the server reports them: vLLM's `prompt_token_ids`
 * (top level) and per-choice `token_ids` (`return_token_ids`), or logprob tokens written as
 * `token_id:123` (`return_tokens_as_token_ids`). Anything else yields null: the ids are unknown.
 */

const TOKEN_ID = /^token_id:(\d+)$/;

function intArray(value: unknown): number[] | null {
  if (!Array.isArray(value) || !value.every((v) => Number.isInteger(v) && v >= 0)) return null;
  return value as number[];
}

export function promptTokenIdsOf(response: unknown, choice: unknown): number[] | null {
  const fromChoice = intArray((choice as { prompt_token_ids?: unknown } | null)?.prompt_token_ids);
  return fromChoice ?? intArray((response as { prompt_token_ids?: unknown } | null)?.prompt_token_ids);
}

/** Completion ids: the choice's `token_ids`, else every logprob token parsed as `token_id:N`. */
export function completionTokenIdsOf(choice: unknown, logprobTokens: string[] | null): number[] | null {
  const direct = intArray((choice as { token_ids?: unknown } | null)?.token_ids);
  if (direct) return direct;
  if (!logprobTokens || logprobTokens.length === 0) return null;
  const ids: number[] = [];
  for (const token of logprobTokens) {
    const m = TOKEN_ID.exec(token);
    if (!m) return null;
    ids.push(Number(m[1]));
  }
  return ids;
}

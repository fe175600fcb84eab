/**
 * OpenAI `logprobs.content` entries: per sampled token its text, logprob and bytes, and, when the
 * request set `top_logprobs`, that many most likely alternatives under the untempered model.
 * `logprob` is the sampling distribution's (what the trainer's importance ratio needs; equal to the
 * model's at temperature 1 without top-k/top-p); the alternatives are the model's own distribution.
 */
import type { TopLogprobs } from '../model/sampler-top.ts';
import type { Tokenizer } from '../model/tokenizer/tokenizer.ts';

export type LogprobTokenSettings = {
  /** vLLM's `return_tokens_as_token_ids`: tokens written `token_id:N`. */
  tokensAsIds: boolean;
  tokenizer: Tokenizer;
};

export type TopLogprobEntry = { token: string; logprob: number; bytes: number[] };
export type LogprobEntry = TopLogprobEntry & { top_logprobs: TopLogprobEntry[] };

function tokenEntry(id: number, logprob: number, s: LogprobTokenSettings): TopLogprobEntry {
  if (s.tokensAsIds) {
    const token = `token_id:${id}`;
    return { token, logprob, bytes: [...Buffer.from(token, 'utf8')] };
  }
  // The token's own bytes: a byte-level token may hold part of a UTF-8 character.
  return { token: s.tokenizer.decode([id]), logprob, bytes: [...s.tokenizer.tokenBytes(id)] };
}

/** One entry; `top` null gives an empty `top_logprobs` (the request asked for none). */
export function logprobEntry(id: number, logprob: number, top: TopLogprobs | null, s: LogprobTokenSettings): LogprobEntry {
  return { ...tokenEntry(id, logprob, s), top_logprobs: top ? top.ids.map((t, i) => tokenEntry(t, top.logprobs[i], s)) : [] };
}

export function logprobEntries(ids: number[], logprobs: number[], tops: TopLogprobs[] | null, s: LogprobTokenSettings): LogprobEntry[] {
  return ids.map((id, i) => logprobEntry(id, logprobs[i], tops?.[i] ?? null, s));
}

/**
 * The k most likely tokens of one row of log-probabilities (OpenAI's `top_logprobs`), read from the
 * untempered model distribution p the sampler also reports `modelLogprobs` from.
 */

export type TopLogprobs = {
  /** Most likely first; ties keep the lower id first. */
  ids: number[];
  logprobs: number[];
};

/** Top `k` entries of `logprobs[offset .. offset + vocab)`, in one pass with a small sorted buffer. */
export function topLogprobs(logprobs: ArrayLike<number>, offset: number, vocab: number, k: number): TopLogprobs {
  const size = Math.min(k, vocab);
  const ids: number[] = [];
  const values: number[] = [];
  for (let i = 0; i < vocab; i++) {
    const v = logprobs[offset + i];
    if (ids.length === size && !(v > values[size - 1])) continue;
    // Insert after every entry >= v: equal values keep the earlier (lower) id first.
    let at = ids.length;
    while (at > 0 && !(values[at - 1] >= v)) at--;
    ids.splice(at, 0, i);
    values.splice(at, 0, v);
    if (ids.length > size) {
      ids.pop();
      values.pop();
    }
  }
  return { ids, logprobs: values };
}

/**
 * Turning one row of the model's log-probabilities into a sampled token, on the JS side in float64:
 *   model distribution    p(x)  = softmax(logits), given as log p (the engine's log-softmax)
 *   sampling distribution q(x) ∝ p(x)^(1/T) = softmax(logits / T), restricted to the top-k tokens,
 *                                then to the smallest most-probable set whose mass reaches top-p,
 *                                renormalised (the order transformers and vLLM use).
 * T = 0 is greedy: q puts mass 1 on the argmax (lowest id on ties). The sampler records log q(x)
 * (what PPO's ratio needs) and log p(x) (what the trainer's forward recomputes).
 * The functions take any row of scores s with softmax(s) = p: logits or log p alike.
 */
import type { Rng } from '../core/random.ts';

export type SamplingParams = {
  /** 0 = greedy. */
  temperature: number;
  /** Keep the k most likely tokens (ties with the k-th included); undefined or 0 = all. */
  topK?: number;
  /** Nucleus mass in (0, 1]; undefined or 1 = all. */
  topP?: number;
};

export type TokenDraw = {
  token: number;
  /** log q(token) under the sampling distribution. */
  logprob: number;
  /** log p(token) under the untempered model. */
  modelLogprob: number;
};

/** log softmax(scores)[token] = s_token - logsumexp(s), over scores[offset .. offset + vocab). */
export function modelLogprob(logits: ArrayLike<number>, offset: number, vocab: number, token: number): number {
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) if (logits[offset + i] > max) max = logits[offset + i];
  let sum = 0;
  for (let i = 0; i < vocab; i++) sum += Math.exp(logits[offset + i] - max);
  return logits[offset + token] - max - Math.log(sum);
}

function argmax(logits: ArrayLike<number>, offset: number, vocab: number): number {
  let best = 0;
  for (let i = 1; i < vocab; i++) if (logits[offset + i] > logits[offset + best]) best = i;
  return best;
}

/**
 * The sampling distribution as (token ids, probabilities), most probable first; only tokens with
 * non-zero probability are listed. Exposed for tests and for top-logprob reporting.
 */
export function samplingDistribution(
  logits: ArrayLike<number>,
  offset: number,
  vocab: number,
  params: SamplingParams,
): { ids: Int32Array; probs: Float64Array } {
  const { temperature } = params;
  if (temperature === 0) return { ids: Int32Array.of(argmax(logits, offset, vocab)), probs: Float64Array.of(1) };
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) if (logits[offset + i] > max) max = logits[offset + i];
  // Tempered weights w_i = exp((l_i - max) / T); the top-k cut is a threshold on the logit.
  let threshold = -Infinity;
  const topK = params.topK ?? 0;
  if (topK > 0 && topK < vocab) {
    const sorted = Float64Array.from({ length: vocab }, (_, i) => logits[offset + i]).sort();
    threshold = sorted[vocab - topK];
  }
  const weights = new Float64Array(vocab);
  let total = 0;
  for (let i = 0; i < vocab; i++) {
    const l = logits[offset + i];
    if (l >= threshold) {
      weights[i] = Math.exp((l - max) / temperature);
      total += weights[i];
    }
  }
  const topP = params.topP ?? 1;
  // Nucleus members all have probability >= (1 - p) / (2V): the tokens below that carry less than
  // (1 - p) / 2 of the mass, so the cumulative sum reaches p before them. Sort only the candidates.
  const floor = topP < 1 ? ((1 - topP) / (2 * vocab)) * total : 0;
  const candidates: number[] = [];
  for (let i = 0; i < vocab; i++) if (weights[i] > 0 && weights[i] >= floor) candidates.push(i);
  candidates.sort((a, b) => weights[b] - weights[a] || a - b);
  let keep = candidates.length;
  if (topP < 1) {
    let cumulative = 0;
    for (let j = 0; j < candidates.length; j++) {
      cumulative += weights[candidates[j]] / total;
      if (cumulative >= topP) {
        keep = j + 1;
        break;
      }
    }
  }
  let kept = 0;
  for (let j = 0; j < keep; j++) kept += weights[candidates[j]];
  const ids = Int32Array.from(candidates.slice(0, keep));
  const probs = Float64Array.from(ids, (id) => weights[id] / kept);
  return { ids, probs };
}

/**
 * Draws one token from row `row` of `logprobs` ([rows, vocab] flattened, each row log p, i.e.
 * already log-softmaxed: its entry is the token's model logprob as is).
 */
export function drawToken(logprobs: ArrayLike<number>, row: number, vocab: number, params: SamplingParams, rng: Rng): TokenDraw {
  const offset = row * vocab;
  const topK = params.topK ?? 0;
  if (params.temperature > 0 && (params.topP ?? 1) >= 1 && !(topK > 0 && topK < vocab)) {
    return drawTempered(logprobs, offset, vocab, params.temperature, rng);
  }
  const { ids, probs } = samplingDistribution(logprobs, offset, vocab, params);
  let pick = 0;
  if (ids.length > 1) {
    let u = rng.next();
    pick = ids.length - 1;
    for (let j = 0; j < ids.length; j++) {
      u -= probs[j];
      if (u < 0) {
        pick = j;
        break;
      }
    }
  }
  const token = ids[pick];
  return { token, logprob: Math.log(probs[pick]), modelLogprob: logprobs[offset + token] };
}

/**
 * Temperature only (no top-k / top-p): q = softmax(s / T) over the whole vocabulary, drawn by one
 * scan in vocabulary order, with no sort (the common RL setting, every decode step of every row).
 */
function drawTempered(logprobs: ArrayLike<number>, offset: number, vocab: number, temperature: number, rng: Rng): TokenDraw {
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) if (logprobs[offset + i] > max) max = logprobs[offset + i];
  const weights = new Float64Array(vocab);
  let total = 0;
  for (let i = 0; i < vocab; i++) {
    weights[i] = Math.exp((logprobs[offset + i] - max) / temperature);
    total += weights[i];
  }
  let u = rng.next() * total;
  let token = vocab - 1;
  for (let i = 0; i < vocab; i++) {
    u -= weights[i];
    if (u < 0) {
      token = i;
      break;
    }
  }
  // Skip zero-weight tokens a rounding tail could land on.
  while (weights[token] === 0 && token > 0) token--;
  return { token, logprob: Math.log(weights[token] / total), modelLogprob: logprobs[offset + token] };
}

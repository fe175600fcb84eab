/**
 * Identical training samples trained once, weighted by their count. In an env that is deterministic
 * given its seed (Blackjack), the G samples of a group often sample the same tokens (every sample
 * that sticks at the first decision) and get the same advantage: k byte-identical samples. Their
 * loss is exactly that of one of them counted k times (rl-batch.ts tokenWeights, loss-normalize.ts),
 * so the step computes one forward where it computed k.
 *
 * Identical means everything the loss reads: the tokens, the loss mask, the per-token advantages,
 * the policy versions that sampled them (the sample's and each span's, with the span bounds), and
 * whether it was sampled at all (an explored answer's ratio is anchored differently, loss-rl.ts).
 * The sampling logprobs are not compared: the same policy sampling the same sequence gives the same
 * logprobs up to float noise (batching, threads), and the first sample's are kept. Supervised
 * samples (those with an sftMask, report-sft-samples.ts) are never merged: their loss does not read
 * the weight.
 */
import type { LayoutSample } from './rl-batch.ts';
import type { TrainingSample } from './samples-types.ts';

export interface MergedSamples<T> {
  /** The first occurrence of each distinct sample, in the order given, with `weight` the count it stands for. */
  samples: T[];
  /** Samples folded into an earlier identical one (input count − output count). */
  merged: number;
}

/** What makes two samples' losses equal (the sampling logprobs aside). */
function sampleKey(s: TrainingSample): string {
  const spans = s.spans.map((span) => `${span.start}-${span.end}@${span.policyVersion}`).join(',');
  return [s.explored ? 'explored' : 'sampled', s.policyVersion, spans, s.tokens.join(','), s.lossMask.join(''), s.advantages.join(',')].join('|');
}

/**
 * Each group of identical samples as its first member with weight = Σ the members' weights (a sample
 * without one counts 1, so merging twice is merging once). Samples that merge with nothing are
 * returned as given (same object); the inputs are never modified.
 */
export function mergeIdenticalSamples<T extends TrainingSample>(samples: readonly T[]): MergedSamples<T> {
  const out: T[] = [];
  const weights: number[] = [];
  const slotOf = new Map<string, number>();
  for (const s of samples) {
    if ((s as LayoutSample).sftMask !== undefined) {
      out.push(s);
      weights.push(s.weight ?? 1);
      continue;
    }
    const key = sampleKey(s);
    const slot = slotOf.get(key);
    if (slot === undefined) {
      slotOf.set(key, out.length);
      out.push(s);
      weights.push(s.weight ?? 1);
    } else {
      weights[slot] += s.weight ?? 1;
    }
  }
  const merged = samples.length - out.length;
  if (merged === 0) return { samples: out, merged };
  return { samples: out.map((s, i) => (weights[i] === (s.weight ?? 1) ? s : { ...s, weight: weights[i] })), merged };
}

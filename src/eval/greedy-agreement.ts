/**
 * Does greedy play in real episodes earn what the greedy table says? The table asks every state as an
 * episode's first decision; an episode's later decisions carry the earlier turns in their context (and
 * other cards), which can change the answer. The exact table value must lie in the sampled mean's 95 %
 * interval for the two to agree.
 */

export interface GreedyAgreement {
  /** False when the episodes were not decoded greedily (nothing to compare). */
  checked: boolean;
  /** null when not checked. */
  agrees: boolean | null;
  message: string;
}

export function greedyAgreement(tableReturn: number, sampled: { mean: number; ci95: [number, number] }, temperature: number): GreedyAgreement {
  const [lo, hi] = sampled.ci95;
  const interval = `${sampled.mean.toFixed(4)} [${lo.toFixed(4)}, ${hi.toFixed(4)}]`;
  if (temperature !== 0) {
    return { checked: false, agrees: null, message: `episodes sampled at temperature ${temperature}, not greedily: not compared with the greedy table` };
  }
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
    return { checked: false, agrees: null, message: 'no sampled interval (too few finished episodes): not compared with the greedy table' };
  }
  // The table's sum over states carries float rounding (~1e-15); an interval of width 0 (every episode alike) must still match it.
  const slack = 1e-9 * Math.max(1, Math.abs(tableReturn));
  if (tableReturn >= lo - slack && tableReturn <= hi + slack) {
    return { checked: true, agrees: true, message: `the sampled greedy mean return ${interval} agrees with the greedy table's exact return ${tableReturn.toFixed(4)}` };
  }
  return {
    checked: true,
    agrees: false,
    message:
      `the greedy table's exact return ${tableReturn.toFixed(4)} lies outside the sampled greedy mean return ${interval}: ` +
      'in real episodes the multi-turn context (or the cards dealt) changes some greedy answers',
  };
}

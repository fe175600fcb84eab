/** Summary statistics used in reports: mean with a normal-approximation 95 % interval. */

export interface MeanCi {
  mean: number;
  /** [low, high] of the 95 % interval of the mean. */
  ci95: [number, number];
  std: number;
  n: number;
}

export function meanCi(values: ArrayLike<number>): MeanCi {
  const n = values.length;
  if (n === 0) return { mean: NaN, ci95: [NaN, NaN], std: NaN, n };
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i];
  const mean = sum / n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (values[i] - mean) ** 2;
  const std = n > 1 ? Math.sqrt(ss / (n - 1)) : 0;
  const half = (1.959963984540054 * std) / Math.sqrt(n);
  return { mean, ci95: [mean - half, mean + half], std, n };
}

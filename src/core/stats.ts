/** Summary statistics used in reports: mean with a normal-approximation 95 % interval. */

export interface MeanCi {
  mean: number;
  /** [low, high] of the 95 % interval of the mean. */
  ci95: [number, number];
  std: number;
  n: number;
}

export function meanCi(values: ArrayLike<number>): MeanCi {
  const stats = new RunningMean();
  for (let i = 0; i < values.length; i++) stats.add(values[i]);
  return stats.result();
}

/**
 * meanCi over a stream, in constant memory. The mean is the sum over n, as a two-pass mean is, so
 * returns whose sums are exact (Blackjack's halves) give the same mean in any order; the spread is
 * Welford's update, stable where the mean is far from 0.
 */
export class RunningMean {
  private n = 0;
  private sum = 0;
  private runningMean = 0;
  /** Sum of squared deviations from the running mean. */
  private m2 = 0;

  add(x: number): void {
    this.n++;
    this.sum += x;
    const delta = x - this.runningMean;
    this.runningMean += delta / this.n;
    this.m2 += delta * (x - this.runningMean);
  }

  get count(): number {
    return this.n;
  }

  result(): MeanCi {
    const n = this.n;
    if (n === 0) return { mean: NaN, ci95: [NaN, NaN], std: NaN, n };
    const mean = this.sum / n;
    const std = n > 1 ? Math.sqrt(this.m2 / (n - 1)) : 0;
    const half = (1.959963984540054 * std) / Math.sqrt(n);
    return { mean, ci95: [mean - half, mean + half], std, n };
  }
}

/**
 * A reliability table: forecasts of a binary event in 10 equal bins of [0, 1], each with its mean
 * forecast, the observed frequency of the event and its count, and the expected calibration error
 * ECE = Σ_bins (count / N)·|mean forecast − observed frequency|.
 */

export const RELIABILITY_BINS = 10;

export interface ReliabilityBin {
  /** The bin is [lo, hi) (the last one includes 1). */
  lo: number;
  hi: number;
  count: number;
  /** null in an empty bin. */
  meanForecast: number | null;
  observedFrequency: number | null;
}

export interface ReliabilityTable {
  bins: ReliabilityBin[];
  /** Forecast-outcome pairs in the table. */
  count: number;
  /** null without pairs. */
  ece: number | null;
}

/** Running sums per bin; plain data so tallies can be merged or stored. */
export interface ReliabilitySums {
  count: number[];
  forecast: number[];
  hits: number[];
}

export function emptyReliabilitySums(): ReliabilitySums {
  const zeros = () => new Array<number>(RELIABILITY_BINS).fill(0);
  return { count: zeros(), forecast: zeros(), hits: zeros() };
}

/** Adds one forecast p ∈ [0, 1] of an event that happened (1) or not (0). */
export function addForecast(sums: ReliabilitySums, p: number, happened: 0 | 1): void {
  if (!(p >= 0 && p <= 1)) throw new Error(`reliability: a forecast must be in [0, 1], got ${p}`);
  const bin = Math.min(RELIABILITY_BINS - 1, Math.floor(p * RELIABILITY_BINS));
  sums.count[bin] += 1;
  sums.forecast[bin] += p;
  sums.hits[bin] += happened;
}

export function reliabilityTable(sums: ReliabilitySums): ReliabilityTable {
  const total = sums.count.reduce((a, b) => a + b, 0);
  let ece = 0;
  const bins = sums.count.map((count, k): ReliabilityBin => {
    const lo = k / RELIABILITY_BINS;
    const hi = (k + 1) / RELIABILITY_BINS;
    if (count === 0) return { lo, hi, count, meanForecast: null, observedFrequency: null };
    const meanForecast = sums.forecast[k] / count;
    const observedFrequency = sums.hits[k] / count;
    ece += (count / total) * Math.abs(meanForecast - observedFrequency);
    return { lo, hi, count, meanForecast, observedFrequency };
  });
  return { bins, count: total, ece: total > 0 ? ece : null };
}

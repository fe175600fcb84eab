/** Known demand distributions of the newsvendor env: pmf, cdf, inverse-cdf sampling and a description. */

export type DemandDistribution =
  | { kind: 'poisson'; mean: number }
  /** Every whole number from `low` to `high` equally likely. */
  | { kind: 'uniform'; low: number; high: number };

/** P(D = d) for d = 0..upTo. */
export function demandPmf(dist: DemandDistribution, upTo: number): number[] {
  const pmf = new Array<number>(upTo + 1).fill(0);
  if (dist.kind === 'uniform') {
    const p = 1 / (dist.high - dist.low + 1);
    for (let d = Math.max(0, dist.low); d <= Math.min(upTo, dist.high); d++) pmf[d] = p;
    return pmf;
  }
  // Poisson: P(0) = e^−λ, P(d) = P(d − 1)·λ/d.
  let p = Math.exp(-dist.mean);
  for (let d = 0; d <= upTo; d++) {
    if (d > 0) p *= dist.mean / d;
    pmf[d] = p;
  }
  return pmf;
}

/** F(q) = P(D ≤ q) for q = 0..upTo. */
export function demandCdf(dist: DemandDistribution, upTo: number): number[] {
  if (dist.kind === 'uniform') {
    const width = dist.high - dist.low + 1;
    return Array.from({ length: upTo + 1 }, (_, q) => Math.min(1, Math.max(0, q - dist.low + 1) / width));
  }
  const pmf = demandPmf(dist, upTo);
  let c = 0;
  return pmf.map((p) => (c += p));
}

/** Inverse-cdf draw from a uniform u in [0, 1): one u per draw keeps streams aligned across policies. */
export function sampleDemand(dist: DemandDistribution, u: number): number {
  if (dist.kind === 'uniform') return dist.low + Math.floor(u * (dist.high - dist.low + 1));
  let d = 0;
  let p = Math.exp(-dist.mean);
  let c = p;
  while (u >= c && p > 0) {
    d += 1;
    p *= dist.mean / d;
    c += p;
  }
  return d;
}

export function describeDemand(dist: DemandDistribution): string {
  return dist.kind === 'poisson'
    ? `Poisson with mean ${dist.mean}`
    : `equally likely to be any whole number from ${dist.low} to ${dist.high}`;
}

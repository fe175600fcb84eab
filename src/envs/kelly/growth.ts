/** Kelly betting math: the expected log growth of a stake and the growth-optimal stake. */

/** E[ln(W'/W)] = p·ln(1 + b·f) + (1 − p)·ln(1 − f), for stake fraction f < 1, net odds b, win probability p. */
export function expectedLogGrowth(p: number, b: number, f: number): number {
  return p * Math.log1p(b * f) + (1 - p) * Math.log1p(-f);
}

/** The Kelly fraction f* = p − (1 − p)/b, or 0 when the bet has no edge. */
export function kellyFraction(p: number, b: number): number {
  return Math.max(0, p - (1 - p) / b);
}

/** Rounds away float noise so that 3 × 0.05 is exactly 0.15 (the value a model would write). */
export function roundGridValue(x: number): number {
  return Number(x.toFixed(10));
}

/** The stake grid 0, step, 2·step, ... up to max. */
export function fractionGrid(step: number, max: number): number[] {
  const count = Math.floor(max / step + 1e-9);
  return Array.from({ length: count + 1 }, (_, k) => roundGridValue(k * step));
}

/**
 * The grid stake with the highest expected log growth. The growth is concave in f with its peak at f*,
 * so the best grid point is one of the two grid neighbours of f* (ties go to the smaller stake).
 */
export function bestGridFraction(p: number, b: number, grid: readonly number[]): number {
  const star = kellyFraction(p, b);
  let below = grid[0];
  let above: number | undefined;
  for (const f of grid) {
    if (f <= star) below = f;
    else if (above === undefined) above = f;
  }
  if (above === undefined) return below;
  return expectedLogGrowth(p, b, above) > expectedLogGrowth(p, b, below) ? above : below;
}

/**
 * Head-to-head rates between policies played on the same seeds: per seed, the higher return wins and
 * a tie counts half, so h2h(a, b) + h2h(b, a) = 1. Seeds where either episode failed (no return) are
 * left out and the count of compared seeds is reported.
 */

export interface HeadToHead {
  /** Share of compared seeds a beat b (ties half); null when no seed could be compared. */
  rate: number | null;
  wins: number;
  ties: number;
  losses: number;
  /** Seeds compared (both episodes have a return). */
  seeds: number;
}

/** a against b; `a[i]` and `b[i]` are the returns on the same seed, NaN for a failed episode. */
export function headToHead(a: ArrayLike<number>, b: ArrayLike<number>): HeadToHead {
  if (a.length !== b.length) throw new Error(`headToHead: ${a.length} returns against ${b.length}; both must be on the same seeds`);
  let wins = 0;
  let ties = 0;
  let losses = 0;
  for (let i = 0; i < a.length; i++) {
    if (Number.isNaN(a[i]) || Number.isNaN(b[i])) continue;
    if (a[i] > b[i]) wins++;
    else if (a[i] < b[i]) losses++;
    else ties++;
  }
  const seeds = wins + ties + losses;
  return { rate: seeds > 0 ? (wins + 0.5 * ties) / seeds : null, wins, ties, losses, seeds };
}

/** Every ordered pair: matrix[a][b] = h2h(a, b) (the diagonal is left out). */
export function headToHeadMatrix(returns: Record<string, ArrayLike<number>>): Record<string, Record<string, HeadToHead>> {
  const names = Object.keys(returns);
  const matrix: Record<string, Record<string, HeadToHead>> = {};
  for (const a of names) {
    matrix[a] = {};
    for (const b of names) if (a !== b) matrix[a][b] = headToHead(returns[a], returns[b]);
  }
  return matrix;
}

/**
 * The Bayes-optimal bandit player: the best any policy can do without seeing the arm probabilities.
 * The env draws each probability uniformly on [0, 1), so after s successes and f failures an arm's
 * posterior is Beta(s + 1, f + 1), paying next with probability (s + 1) / (s + f + 2). A
 * finite-horizon dynamic program over every arm's (successes, failures) gives each state's expected
 * future payout and each pull's value, exploration included. Arms with equal counts are
 * interchangeable, so a state is the sorted multiset of counts (k! fewer states).
 *
 * The number of states grows fast with k and the horizon (k 3 × 10 pulls: a few thousand; k 3 × 200:
 * ~10^10), so past MAX_STATES the program gives up with an error rather than run out of memory.
 */

/** States the program may memoise before giving up. */
export const MAX_STATES = 2_000_000;

type Counts = readonly (readonly [number, number])[];

/** About how many states the program visits: count vectors with at most `horizon` pulls, over k! orders. */
export function estimatedStates(k: number, horizon: number): number {
  let n = 1;
  for (let i = 1; i <= 2 * k; i++) n = (n * (horizon + i)) / i; // C(horizon + 2k, 2k)
  for (let i = 2; i <= k; i++) n /= i;
  return n;
}

export class BayesBandit {
  private readonly memo = new Map<string, number>();

  constructor(
    readonly k: number,
    readonly horizon: number,
  ) {
    // Refused up front when plainly too large (the memo's cap below catches the rest).
    if (estimatedStates(k, horizon) > MAX_STATES) throw this.tooLarge();
  }

  private tooLarge(): Error {
    return new Error(`the Bayes-optimal bandit needs more than ${MAX_STATES.toLocaleString('en-US')} states for k ${this.k} and ${this.horizon} pulls`);
  }

  /** Expected payout of the remaining pulls under optimal play, from `counts` ([successes, failures] per arm). */
  value(counts: Counts): number {
    const left = this.horizon - counts.reduce((n, [s, f]) => n + s + f, 0);
    if (left <= 0) return 0;
    const key = counts
      .map(([s, f]) => s * 1024 + f)
      .sort((a, b) => a - b)
      .join(',');
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    if (this.memo.size >= MAX_STATES) throw this.tooLarge();
    const best = Math.max(...this.pullValues(counts));
    this.memo.set(key, best);
    return best;
  }

  /** Each arm's pull value: its posterior mean now plus the expected value of the state it leads to. */
  pullValues(counts: Counts): number[] {
    return counts.map(([s, f], arm) => {
      const p = (s + 1) / (s + f + 2);
      const after = (hit: boolean) => counts.map((c, i): [number, number] => (i === arm ? (hit ? [s + 1, f] : [s, f + 1]) : [c[0], c[1]]));
      return p * (1 + this.value(after(true))) + (1 - p) * this.value(after(false));
    });
  }

  /** The Bayes-optimal arm (the first of equals). */
  bestArm(counts: Counts): number {
    const values = this.pullValues(counts);
    let best = 0;
    for (let i = 1; i < values.length; i++) if (values[i] > values[best] + 1e-12) best = i;
    return best;
  }
}

const players = new Map<string, BayesBandit>();

/** The shared player for k arms and `horizon` pulls (its memo is kept for the process). */
export function bayesBandit(k: number, horizon: number): BayesBandit {
  const key = `${k}/${horizon}`;
  let player = players.get(key);
  if (!player) {
    player = new BayesBandit(k, horizon);
    players.set(key, player);
  }
  return player;
}

/** The Bayes-optimal expected total payout of an episode. */
export function bayesOptimalReturn(k: number, horizon: number): number {
  return bayesBandit(k, horizon).value(Array.from({ length: k }, () => [0, 0] as const));
}

/** The forward algorithm (filtering) for a discrete hidden Markov model: p(z_t | o_1..o_t). */

/** Predict: p(z_{t+1} = j | o_1..t) = Σ_i p(z_t = i | o_1..t)·A[i][j]. */
export function predict(posterior: readonly number[], transition: readonly (readonly number[])[]): number[] {
  return transition[0].map((_, j) => posterior.reduce((sum, p, i) => sum + p * transition[i][j], 0));
}

/** Update: p(z_t = k | o_1..t) ∝ p(z_t = k | o_1..t−1)·B[k][o_t]. */
export function update(prior: readonly number[], emission: readonly (readonly number[])[], symbol: number): number[] {
  const joint = prior.map((p, k) => p * emission[k][symbol]);
  const total = joint.reduce((a, b) => a + b, 0);
  if (!(total > 0)) throw new Error(`hmm: signal ${symbol} has probability 0 under the prior`);
  return joint.map((x) => x / total);
}

/** The filtered posterior at every step of an observation sequence, starting from `initial`. */
export function forwardPosteriors(
  initial: readonly number[],
  transition: readonly (readonly number[])[],
  emission: readonly (readonly number[])[],
  symbols: readonly number[],
): number[][] {
  const out: number[][] = [];
  let prior: readonly number[] = initial;
  for (const o of symbols) {
    const posterior = update(prior, emission, o);
    out.push(posterior);
    prior = predict(posterior, transition);
  }
  return out;
}

/**
 * A policy's score on the scale random = 0, oracle = 1: (policy − random) / (oracle − random). The
 * basis is `exact` when the policy, random and the oracle all have an exact expected return (the
 * oracle's may be the env's optimal return), otherwise every one's sampled mean on the same seeds,
 * so the three figures are always of one kind.
 */

export const RANDOM_POLICY = 'random';
export const ORACLE_POLICY = 'oracle';

export type ScoreBasis = 'exact' | 'sampled';

export interface NormalisedScore {
  /** null when oracle and random are worth the same, or a figure is missing (no finished episode). */
  value: number | null;
  basis: ScoreBasis;
  /** The three figures the value was computed from. */
  policy: number;
  random: number;
  oracle: number;
}

/** What the score needs of an evaluated policy (a PolicyEval has it). */
export interface ValuedPolicy {
  policy: string;
  meanReturn: number;
  exactReturn: number | null;
}

/** The score of `name`, or null when it, random or the oracle is not among `policies`. */
export function normalisedScore(policies: readonly ValuedPolicy[], name: string, optimalReturn: number | null): NormalisedScore | null {
  const find = (n: string) => policies.find((p) => p.policy === n);
  const target = find(name);
  const random = find(RANDOM_POLICY);
  const oracle = find(ORACLE_POLICY);
  if (!target || !random || !oracle) return null;
  const oracleExact = oracle.exactReturn ?? optimalReturn;
  const exact = target.exactReturn !== null && random.exactReturn !== null && oracleExact !== null;
  const [p, r, o] = exact ? [target.exactReturn!, random.exactReturn!, oracleExact!] : [target.meanReturn, random.meanReturn, oracle.meanReturn];
  const span = o - r;
  // Exact values carry float rounding: a span within it is no span.
  const tiny = 1e-12 * Math.max(1, Math.abs(o), Math.abs(r));
  const value = Number.isFinite(p) && Number.isFinite(span) && Math.abs(span) > tiny ? (p - r) / span : null;
  return { value, basis: exact ? 'exact' : 'sampled', policy: p, random: r, oracle: o };
}

/** One line: the formula, the figures and the value, e.g. `normalisedScoreLine(score, 'trained')` in a report. */
export function normalisedScoreLine(score: NormalisedScore, label: string): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(4) : 'n/a');
  const value = score.value === null ? 'n/a (oracle and random are worth the same, or a figure is missing)' : score.value.toFixed(4);
  return (
    `normalised score, ${score.basis} returns: (${label} − random) / (oracle − random) = ` +
    `(${f(score.policy)} − ${f(score.random)}) / (${f(score.oracle)} − ${f(score.random)}) = ${value}`
  );
}

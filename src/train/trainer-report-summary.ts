/**
 * The final evaluation's figures in `spindle train --json`'s last line (and the run's stored
 * summary): the trained policy's and the warm start's headline figures with their env metrics,
 * the baselines' mean returns and env metrics, and both normalised scores with their basis.
 */
import type { PolicyEval } from '../eval/evaluate.ts';
import type { ScoreBasis } from '../eval/normalised-score.ts';
import type { FinalEval } from './trainer-final.ts';

/** A figure, or null where no episode was scored (every one failed): JSON and the store hold no NaN. */
type Figure = number | null;

export interface FinalSummary {
  eval: {
    meanReturn: Figure;
    ci95: [Figure, Figure];
    exactReturn: number | null;
    winRate: Figure;
    invalidRate: Figure;
    meanTurns: Figure;
    /** Episodes that failed (an env, policy or engine error), by reason. */
    failed: number;
    failureReasons: Record<string, number>;
    metrics: Record<string, number>;
  };
  warmStart: { meanReturn: Figure; exactReturn: number | null; invalidRate: Figure; failed: number; steps: number | null; metrics: Record<string, number> } | null;
  /** Mean return (greedy, same seeds) by baseline name, the warm start included; null where every episode failed. */
  baselines: Record<string, Figure>;
  /** The env's episode metrics by baseline name (empty objects where the env records none). */
  baselineMetrics: Record<string, Record<string, number>>;
  /** (trained − random) / (oracle − random); null when random or the oracle is missing or they are worth the same. */
  normalisedScore: number | null;
  normalisedScoreBasis: ScoreBasis | null;
  warmStartNormalisedScore: number | null;
  warmStartNormalisedScoreBasis: ScoreBasis | null;
}

function figure(x: number): Figure {
  return Number.isFinite(x) ? x : null;
}

function score(p: PolicyEval | null): { value: number | null; basis: ScoreBasis | null } {
  const s = p?.normalisedScore ?? null;
  return { value: s?.value ?? null, basis: s?.basis ?? null };
}

export function finalSummary(final: FinalEval, warmStartSteps: number | null): FinalSummary {
  const p = final.trained;
  const w = final.warmStart;
  const baselineMetrics: Record<string, Record<string, number>> = {};
  for (const b of final.report.policies) if (b.policy !== p.policy) baselineMetrics[b.policy] = b.metrics;
  const trainedScore = score(p);
  const warmScore = score(w);
  return {
    eval: {
      meanReturn: figure(p.meanReturn),
      ci95: [figure(p.ci95[0]), figure(p.ci95[1])],
      exactReturn: p.exactReturn,
      winRate: figure(p.winRate),
      invalidRate: figure(p.invalidRate),
      meanTurns: figure(p.meanTurns),
      failed: p.failed,
      failureReasons: p.failureReasons,
      metrics: p.metrics,
    },
    warmStart: w ? { meanReturn: figure(w.meanReturn), exactReturn: w.exactReturn, invalidRate: figure(w.invalidRate), failed: w.failed, steps: warmStartSteps, metrics: w.metrics } : null,
    baselines: Object.fromEntries(Object.entries(final.baselines).map(([name, value]) => [name, figure(value)])),
    baselineMetrics,
    normalisedScore: trainedScore.value,
    normalisedScoreBasis: trainedScore.basis,
    warmStartNormalisedScore: warmScore.value,
    warmStartNormalisedScoreBasis: warmScore.basis,
  };
}

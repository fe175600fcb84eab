/**
 * The final evaluation's figures in `spindle train --json`'s last line (and the run's stored
 * summary): the trained policy's and the warm start's headline figures with their env metrics,
 * the baselines' mean returns and env metrics, and both normalised scores with their basis.
 */
import type { PolicyEval } from '../eval/evaluate.ts';
import type { ScoreBasis } from '../eval/normalised-score.ts';
import type { FinalEval } from './trainer-final.ts';

export interface FinalSummary {
  eval: {
    meanReturn: number;
    ci95: [number, number];
    exactReturn: number | null;
    winRate: number;
    invalidRate: number;
    meanTurns: number;
    metrics: Record<string, number>;
  };
  warmStart: { meanReturn: number; exactReturn: number | null; invalidRate: number; steps: number | null; metrics: Record<string, number> } | null;
  /** Mean return (greedy, same seeds) by baseline name, the warm start included. */
  baselines: Record<string, number>;
  /** The env's episode metrics by baseline name (empty objects where the env records none). */
  baselineMetrics: Record<string, Record<string, number>>;
  /** (trained − random) / (oracle − random); null when random or the oracle is missing or they are worth the same. */
  normalisedScore: number | null;
  normalisedScoreBasis: ScoreBasis | null;
  warmStartNormalisedScore: number | null;
  warmStartNormalisedScoreBasis: ScoreBasis | null;
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
    eval: { meanReturn: p.meanReturn, ci95: p.ci95, exactReturn: p.exactReturn, winRate: p.winRate, invalidRate: p.invalidRate, meanTurns: p.meanTurns, metrics: p.metrics },
    warmStart: w ? { meanReturn: w.meanReturn, exactReturn: w.exactReturn, invalidRate: w.invalidRate, steps: warmStartSteps, metrics: w.metrics } : null,
    baselines: final.baselines,
    baselineMetrics,
    normalisedScore: trainedScore.value,
    normalisedScoreBasis: trainedScore.basis,
    warmStartNormalisedScore: warmScore.value,
    warmStartNormalisedScoreBasis: warmScore.basis,
  };
}

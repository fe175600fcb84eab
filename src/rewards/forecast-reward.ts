/**
 * The `forecast` reward part: minus the summed proper-scoring loss of the turn's report answers
 * (see forecast-score.ts), so a better forecast earns more. Turns without a report record (no
 * questions asked, or an invalid answer that never stepped the env) score 0: the invalid-action
 * penalty already covers them.
 */
import type { Turn } from '../core/trajectory.ts';
import type { ProbabilityRule, ReportTruth } from './forecast-score.ts';
import { scoreAnswer } from './forecast-score.ts';
import { rawAnswers, reportRecordOf } from './report-record.ts';
import type { TurnReward } from './reward.ts';

export const FORECAST_PART = 'forecast';

export interface ForecastScoring {
  /** `oracle` (excess loss over the oracle's answer; the default, as the seed trainer scores reports against oracle targets) or `outcome`. */
  against: 'oracle' | 'outcome';
  rule: ProbabilityRule;
}

/** The turn's loss per question name, or null without a report record. */
export function turnForecastLosses(turn: Turn, scoring: ForecastScoring): Record<string, number> | null {
  const record = reportRecordOf(turn);
  if (!record) return null;
  const answers = rawAnswers(turn, record);
  const losses: Record<string, number> = {};
  for (const q of record.questions) {
    const truth: ReportTruth =
      scoring.against === 'oracle' ? { against: 'oracle', target: record.targets[q.name] } : { against: 'outcome', outcome: record.outcomes[q.name] };
    if (truth.against === 'oracle' ? truth.target === undefined : truth.outcome === undefined) {
      throw new Error(`turn ${turn.index}: the report record has no ${scoring.against === 'oracle' ? 'target' : 'outcome'} for '${q.name}'`);
    }
    losses[q.name] = scoreAnswer(q, answers[q.name], truth, scoring.rule).loss;
  }
  return losses;
}

export function forecastScore(turn: Turn, scoring: ForecastScoring): number {
  const losses = turnForecastLosses(turn, scoring);
  if (!losses) return 0;
  return -Object.values(losses).reduce((a, b) => a + b, 0);
}

export function forecastReward(scoring: ForecastScoring): TurnReward {
  return { name: FORECAST_PART, score: (turn) => forecastScore(turn, scoring) };
}

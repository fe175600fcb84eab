/**
 * Calibration of report answers, per env and question, from recorded trajectories: a reliability
 * table with its ECE, and the mean proper-scoring losses against the realised outcomes.
 *   probability  pairs (answer, outcome); Brier and log loss
 *   choice       one pair per option (answer_k, outcome = k), one-vs-rest; multi-class Brier and log loss
 *   quantile     pairs (level, outcome ≤ answer): a calibrated quantile is exceeded with probability
 *                1 − level; pinball loss
 * Missing and malformed answers are counted, add no pair, and enter the mean losses at the rule's
 * worst loss (as in the `forecast` reward). Turns without a report record (invalid answers) are skipped.
 */
import type { Trajectory } from '../core/trajectory.ts';
import type { ReportQuestion } from '../envs/env.ts';
import { choiceVector, readAnswer } from '../rewards/forecast-answer.ts';
import { scoreAnswer, type ProbabilityRule } from '../rewards/forecast-score.ts';
import { rawAnswers, reportRecordOf } from '../rewards/report-record.ts';
import { addForecast, emptyReliabilitySums, reliabilityTable, type ReliabilitySums, type ReliabilityTable } from './reliability.ts';

export interface QuestionCalibration {
  env: string;
  question: string;
  kind: ReportQuestion['kind'];
  /** Decisions that asked the question. */
  decisions: number;
  missing: number;
  malformed: number;
  reliability: ReliabilityTable;
  /** Mean losses against the outcome; null where the rule does not apply to the kind. */
  brier: number | null;
  log: number | null;
  pinball: number | null;
}

type QuestionTally = Pick<QuestionCalibration, 'env' | 'question' | 'kind' | 'decisions' | 'missing' | 'malformed'> & {
  sums: ReliabilitySums;
  loss: { brier: number; log: number; pinball: number };
};

/** Accumulates trajectories one at a time (an evaluation need not keep them). */
export class CalibrationTally {
  private readonly tallies = new Map<string, QuestionTally>();

  add(trajectory: Trajectory): void {
    for (const turn of trajectory.turns) {
      const record = reportRecordOf(turn);
      if (!record) continue;
      const answers = rawAnswers(turn, record);
      for (const q of record.questions) {
        const outcome = record.outcomes[q.name];
        if (outcome === undefined) throw new Error(`turn ${turn.index}: the report record has no outcome for '${q.name}'`);
        const tally = this.tally(trajectory.env, q);
        tally.decisions++;
        const truth = { against: 'outcome', outcome } as const;
        const score = (rule: ProbabilityRule) => scoreAnswer(q, answers[q.name], truth, rule);
        if (q.kind === 'quantile') tally.loss.pinball += score('brier').loss;
        else {
          tally.loss.brier += score('brier').loss;
          tally.loss.log += score('log').loss;
        }
        const answer = readAnswer(q, answers[q.name]);
        if (!answer.ok) {
          tally[answer.reason]++;
          continue;
        }
        if (q.kind === 'probability') addForecast(tally.sums, answer.value as number, outcome === 1 ? 1 : 0);
        else if (q.kind === 'quantile') addForecast(tally.sums, q.level, (outcome as number) <= (answer.value as number) ? 1 : 0);
        else choiceVector(q.options, answer.value).forEach((p, k) => addForecast(tally.sums, p, q.options[k] === outcome ? 1 : 0));
      }
    }
  }

  report(): QuestionCalibration[] {
    return [...this.tallies.values()].map((t) => {
      const mean = (sum: number) => (t.decisions > 0 ? sum / t.decisions : null);
      const quantile = t.kind === 'quantile';
      return {
        env: t.env,
        question: t.question,
        kind: t.kind,
        decisions: t.decisions,
        missing: t.missing,
        malformed: t.malformed,
        reliability: reliabilityTable(t.sums),
        brier: quantile ? null : mean(t.loss.brier),
        log: quantile ? null : mean(t.loss.log),
        pinball: quantile ? mean(t.loss.pinball) : null,
      };
    });
  }

  private tally(env: string, q: ReportQuestion): QuestionTally {
    const key = JSON.stringify([env, q.name]);
    let tally = this.tallies.get(key);
    if (!tally) {
      tally = { env, question: q.name, kind: q.kind, decisions: 0, missing: 0, malformed: 0, sums: emptyReliabilitySums(), loss: { brier: 0, log: 0, pinball: 0 } };
      this.tallies.set(key, tally);
    } else if (tally.kind !== q.kind) {
      throw new Error(`env '${env}': report question '${q.name}' changed kind (${tally.kind} → ${q.kind})`);
    }
    return tally;
  }
}

/** Calibration per env and question over a set of trajectories. */
export function calibrationReport(trajectories: Iterable<Trajectory>): QuestionCalibration[] {
  const tally = new CalibrationTally();
  for (const t of trajectories) tally.add(t);
  return tally.report();
}

/**
 * Scripted answers to an env's report questions (DecisionView.reportQuestions), added as extra
 * arguments of the action call: the oracle gives its own targets (so its calibration is the env's
 * exact posterior), random gives uniformly random forecasts.
 */
import type { Rng } from '../core/random.ts';
import type { Action, DecisionView, ReportQuestion, ReportValue } from '../envs/env.ts';
import { reportTargets } from '../envs/report-arguments.ts';

const questionsOf = (view: DecisionView): ReportQuestion[] => view.reportQuestions?.() ?? [];

/** The oracle's target for every question asked now (none asked: no answers). */
export function oracleReportAnswers(view: DecisionView): Record<string, ReportValue> {
  const questions = questionsOf(view);
  if (questions.length === 0) return {};
  if (typeof view.oracle !== 'function') throw new Error('report questions need the env oracle for oracle answers');
  return reportTargets(questions, view.oracle());
}

/** A uniform random forecast per question: p ~ U(0, 1); a choice's weights U(0, 1) normalised; a quantile ~ U(range). */
export function randomReportAnswers(view: DecisionView, rng: Rng): Record<string, ReportValue> {
  const answers: Record<string, ReportValue> = {};
  for (const q of questionsOf(view)) {
    if (q.kind === 'probability') answers[q.name] = rng.next();
    else if (q.kind === 'quantile') answers[q.name] = q.range[0] + rng.next() * (q.range[1] - q.range[0]);
    else {
      const w = q.options.map(() => rng.next());
      const sum = w.reduce((a, b) => a + b, 0);
      answers[q.name] = Object.fromEntries(q.options.map((o, k) => [o, w[k] / sum]));
    }
  }
  return answers;
}

/** The action with report answers as extra arguments. */
export function withReportAnswers(action: Action, answers: Record<string, ReportValue>): Action {
  return Object.keys(answers).length === 0 ? action : { name: action.name, arguments: { ...action.arguments, ...answers } };
}

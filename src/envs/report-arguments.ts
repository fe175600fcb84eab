/**
 * How report questions ride on the action tool call: each question is an optional extra argument
 * of the action tool, named as the question. The schema documents the expected value but does not
 * constrain it, so a malformed answer still lets the action through and is scored as the worst
 * forecast instead of voiding the decision.
 */
import type { JsonSchema } from '../core/messages.ts';
import type { Action, OracleAdvice, ReportQuestion, ReportValue } from './env.ts';

function describeAnswer(q: ReportQuestion): string {
  switch (q.kind) {
    case 'probability':
      return `${q.text} (a probability from 0 to 1)`;
    case 'quantile':
      return `${q.text} (a number from ${q.range[0]} to ${q.range[1]})`;
    case 'choice':
      return `${q.text} (an object giving each of ${q.options.join(', ')} a probability; they sum to 1)`;
  }
}

/** The action tool's extra properties, one per question. */
export function reportProperties(questions: readonly ReportQuestion[]): Record<string, JsonSchema> {
  return Object.fromEntries(questions.map((q) => [q.name, { description: describeAnswer(q) }]));
}

/** The action without its report answers (what the env's dynamics and action tables look at). */
export function withoutReportAnswers(action: Action, questions: readonly ReportQuestion[]): Action {
  const names = new Set(questions.map((q) => q.name));
  return { name: action.name, arguments: Object.fromEntries(Object.entries(action.arguments).filter(([k]) => !names.has(k))) };
}

/** The oracle's target per question, read from its forecasts (a choice's from `${name}_${option}`). */
export function reportTargets(questions: readonly ReportQuestion[], advice: OracleAdvice): Record<string, ReportValue> {
  const forecasts = advice.forecasts ?? {};
  const read = (key: string): number => {
    const v = forecasts[key];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`oracle().forecasts.${key}: missing target of a report question`);
    return v;
  };
  const targets: Record<string, ReportValue> = {};
  for (const q of questions) {
    targets[q.name] = q.kind === 'choice' ? Object.fromEntries(q.options.map((o) => [o, read(`${q.name}_${o}`)])) : read(q.name);
  }
  return targets;
}

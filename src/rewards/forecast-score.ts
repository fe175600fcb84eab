/**
 * Scoring one report answer with a proper scoring rule, as a loss (lower is better):
 * probabilities and choices by Brier or log loss, quantiles by pinball loss. The truth is either
 * the realised outcome (the standard proper score) or the oracle's target. Against the oracle the
 * loss is the excess over the oracle's own answer: its expected loss under the oracle's posterior
 * minus the posterior's (Brier: (a − p*)²; log: KL(p* ‖ a); pinball: ρ_τ(q* − a)), lower variance,
 * the same minimiser, and 0 for the oracle. A missing or malformed answer gets the rule's worst loss
 * (against the oracle, minus the same baseline).
 */
import type { ReportOutcome, ReportQuestion, ReportValue } from '../envs/env.ts';
import { choiceVector, readAnswer } from './forecast-answer.ts';
import {
  brierLoss,
  logLoss,
  multiBrierLoss,
  multiLogLoss,
  pinballLoss,
  WORST_BRIER,
  WORST_LOG,
  WORST_MULTI_BRIER,
  worstPinballLoss,
} from './scoring-rules.ts';

/** `brier` or `log` for probabilities and choices; quantiles always use pinball loss. */
export type ProbabilityRule = 'brier' | 'log';

/** What an answer is scored against. */
export type ReportTruth = { against: 'oracle'; target: ReportValue } | { against: 'outcome'; outcome: ReportOutcome };

export interface ForecastScore {
  loss: number;
  /** `missing` / `malformed` answers got the worst loss. */
  status: 'ok' | 'missing' | 'malformed';
}

export function worstLoss(question: ReportQuestion, rule: ProbabilityRule): number {
  if (question.kind === 'quantile') return worstPinballLoss(question.level, question.range);
  if (rule === 'log') return WORST_LOG;
  return question.kind === 'choice' ? WORST_MULTI_BRIER : WORST_BRIER;
}

/** The truth as a number (probability, quantile) or a probability vector over the options (choice). */
function truthValue(question: ReportQuestion, truth: ReportTruth): number | number[] {
  if (truth.against === 'oracle') {
    const t = truth.target;
    if (question.kind === 'choice') return choiceVector(question.options, t);
    if (typeof t !== 'number') throw new Error(`report question '${question.name}': the oracle's target must be a number`);
    return t;
  }
  const o = truth.outcome;
  if (question.kind === 'choice') {
    if (!question.options.includes(String(o))) throw new Error(`report question '${question.name}': outcome ${JSON.stringify(o)} is not an option`);
    return question.options.map((option) => (option === o ? 1 : 0));
  }
  if (typeof o !== 'number') throw new Error(`report question '${question.name}': the outcome must be a number`);
  return o;
}

/** The rule's loss of answer a (a number, or a vector over the options) when the truth is y. */
function lossOf(question: ReportQuestion, a: number | number[], y: number | number[], rule: ProbabilityRule): number {
  switch (question.kind) {
    case 'quantile':
      return pinballLoss(a as number, y as number, question.level);
    case 'probability':
      return (rule === 'log' ? logLoss : brierLoss)(a as number, y as number);
    case 'choice':
      return (rule === 'log' ? multiLogLoss : multiBrierLoss)(a as number[], y as number[]);
  }
}

export function scoreAnswer(question: ReportQuestion, raw: unknown, truth: ReportTruth, rule: ProbabilityRule): ForecastScore {
  const y = truthValue(question, truth);
  const baseline = truth.against === 'oracle' ? lossOf(question, y, y, rule) : 0;
  const answer = readAnswer(question, raw);
  if (!answer.ok) return { loss: worstLoss(question, rule) - baseline, status: answer.reason };
  const a = question.kind === 'choice' ? choiceVector(question.options, answer.value) : (answer.value as number);
  return { loss: lossOf(question, a, y, rule) - baseline, status: 'ok' };
}

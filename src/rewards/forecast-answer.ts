/**
 * Reading a report answer: the value the agent gave for a question, checked against the question's
 * kind. Anything else (missing, wrong type, out of range, a choice that does not sum to 1) is
 * malformed: it gets the rule's worst score and is counted.
 */
import type { ReportQuestion, ReportValue } from '../envs/env.ts';

/** How far a choice's probabilities may sum from 1 (then they are renormalised). */
export const CHOICE_SUM_TOLERANCE = 0.01;

export type ReadAnswer = { ok: true; value: ReportValue } | { ok: false; reason: 'missing' | 'malformed' };

const isProbability = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x <= 1;

/** The answer's value, a choice's probabilities renormalised to sum exactly 1. */
export function readAnswer(question: ReportQuestion, raw: unknown): ReadAnswer {
  if (raw === undefined || raw === null) return { ok: false, reason: 'missing' };
  const bad = { ok: false, reason: 'malformed' } as const;
  switch (question.kind) {
    case 'probability':
      return isProbability(raw) ? { ok: true, value: raw } : bad;
    case 'quantile': {
      const [lo, hi] = question.range;
      return typeof raw === 'number' && Number.isFinite(raw) && raw >= lo && raw <= hi ? { ok: true, value: raw } : bad;
    }
    case 'choice': {
      if (typeof raw !== 'object' || Array.isArray(raw)) return bad;
      const given = raw as Record<string, unknown>;
      if (Object.keys(given).some((k) => !question.options.includes(k))) return bad;
      const ps = question.options.map((o) => given[o]);
      if (!ps.every(isProbability)) return bad;
      const sum = ps.reduce((a, b) => a + b, 0);
      if (Math.abs(sum - 1) > CHOICE_SUM_TOLERANCE) return bad;
      return { ok: true, value: Object.fromEntries(question.options.map((o, k) => [o, ps[k] / sum])) };
    }
  }
}

/** The probability vector of a choice value, in the question's option order. */
export function choiceVector(options: readonly string[], value: ReportValue): number[] {
  if (typeof value === 'number') throw new Error('a choice needs a probability per option, got a number');
  return options.map((o) => value[o] ?? 0);
}

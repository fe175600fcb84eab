/** Reading the `ReportRecord` an env left in a recorded turn's step info, checked where it enters. */
import { z } from 'zod';
import type { Turn } from '../core/trajectory.ts';
import { REPORT_INFO_KEY, type ReportRecord } from '../envs/env.ts';

const finite = z.number().finite();
const questionSchema = z.discriminatedUnion('kind', [
  z.object({ name: z.string().min(1), kind: z.literal('probability'), text: z.string() }),
  z.object({
    name: z.string().min(1),
    kind: z.literal('quantile'),
    level: z.number().gt(0).lt(1),
    range: z.tuple([finite, finite]).refine(([lo, hi]) => lo <= hi, 'the low end must not exceed the high end'),
    text: z.string(),
  }),
  z.object({ name: z.string().min(1), kind: z.literal('choice'), options: z.array(z.string()).min(2), text: z.string() }),
]);
const valueSchema = z.union([finite, z.record(z.string(), finite)]);

export const reportRecordSchema = z.object({
  questions: z.array(questionSchema),
  targets: z.record(z.string(), valueSchema),
  outcomes: z.record(z.string(), z.union([finite, z.string()])),
});

/** The turn's report record, or null when its step recorded none (no questions, or an invalid answer). */
export function reportRecordOf(turn: Pick<Turn, 'info' | 'index'>): ReportRecord | null {
  const raw = turn.info[REPORT_INFO_KEY];
  if (raw === undefined) return null;
  const check = reportRecordSchema.safeParse(raw);
  if (!check.success) {
    const issue = check.error.issues[0];
    throw new Error(`turn ${turn.index}: info.${REPORT_INFO_KEY}.${issue.path.join('.')}: ${issue.message}`);
  }
  return check.data as ReportRecord;
}

/** The agent's raw answer to each question: the action call's argument of the question's name. */
export function rawAnswers(turn: Pick<Turn, 'actions'>, record: ReportRecord): Record<string, unknown> {
  const args = turn.actions[0]?.arguments ?? {};
  return Object.fromEntries(record.questions.map((q) => [q.name, args[q.name]]));
}

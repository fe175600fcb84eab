/**
 * The supervised target for report questions (the trainer's option to learn them by SFT on the
 * oracle's answers): for a recorded decision, the action call the agent made with its report
 * arguments replaced by the oracle's targets, as the `<tool_call>` text a model writes.
 */
import type { ToolCall } from '../core/messages.ts';
import type { Turn } from '../core/trajectory.ts';
import { rawAnswers, reportRecordOf } from './report-record.ts';

/** The oracle's target per question at this decision, or null when the turn recorded no report. */
export function reportTargetArguments(turn: Pick<Turn, 'info' | 'index' | 'actions'>): Record<string, unknown> | null {
  const record = reportRecordOf(turn);
  if (!record) return null;
  const args: Record<string, unknown> = {};
  for (const q of record.questions) {
    if (record.targets[q.name] === undefined) throw new Error(`turn ${turn.index}: the report record has no target for '${q.name}'`);
    args[q.name] = record.targets[q.name];
  }
  return args;
}

/**
 * The taken action call with its report answers replaced by the oracle's targets (the action's own
 * arguments first), or null when the turn recorded no report (no questions, or an invalid answer).
 */
export function reportTargetCall(turn: Pick<Turn, 'info' | 'index' | 'actions'>): ToolCall | null {
  const targets = reportTargetArguments(turn);
  const action = turn.actions[0];
  if (!targets || !action) return null;
  const record = reportRecordOf(turn)!;
  const own = Object.keys(rawAnswers(turn, record));
  const kept = Object.fromEntries(Object.entries(action.arguments).filter(([k]) => !own.includes(k)));
  return { ...action, arguments: { ...kept, ...targets } };
}

/** reportTargetCall as `<tool_call>{"name", "arguments"}</tool_call>` text (compact JSON), or null. */
export function reportTargetCallText(turn: Pick<Turn, 'info' | 'index' | 'actions'>): string | null {
  const call = reportTargetCall(turn);
  return call ? `<tool_call>${JSON.stringify({ name: call.name, arguments: call.arguments })}</tool_call>` : null;
}

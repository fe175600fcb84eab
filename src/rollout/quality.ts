/**
 * Rollout quality: per episode, the defects that make a trajectory poor training data (an empty
 * response, a turn without an action, too few turns, a call without a system prompt); per run,
 * how often each occurs.
 */
import type { QualityIssue, Trajectory } from '../core/trajectory.ts';

export type QualityKind = QualityIssue['kind'];
export const QUALITY_KINDS: readonly QualityKind[] = ['empty_response', 'no_action', 'too_few_turns', 'missing_system_prompt'];

export interface QualityOptions {
  /** Episodes with fewer turns are flagged `too_few_turns` (default 1). */
  minTurns?: number;
}

export function checkTrajectoryQuality(trajectory: Trajectory, options: QualityOptions = {}): QualityIssue[] {
  const issues: QualityIssue[] = [];
  const minTurns = options.minTurns ?? 1;
  let systemChecked = false;
  for (const turn of trajectory.turns) {
    for (let i = 0; i < turn.calls.length; i++) {
      const { completion, messages } = turn.calls[i];
      const empty = completion.text.trim() === '' && !completion.toolCalls?.length && !completion.reasoning;
      if (empty && completion.finishReason !== 'timeout') {
        issues.push({ kind: 'empty_response', turn: turn.index, message: `call ${i} of turn ${turn.index} returned an empty response` });
      }
      const first = messages[0];
      if (!systemChecked && (!first || first.role !== 'system' || first.content.trim() === '')) {
        systemChecked = true;
        issues.push({ kind: 'missing_system_prompt', turn: turn.index, message: `call ${i} of turn ${turn.index} was sent without a system prompt` });
      }
    }
    if (turn.actions.length === 0 || turn.invalid) {
      const why = turn.invalid ? turn.feedback : (trajectory.statusReason ?? 'no action taken');
      issues.push({ kind: 'no_action', turn: turn.index, message: `turn ${turn.index} has no action: ${why}` });
    }
  }
  if (trajectory.turns.length < minTurns) {
    issues.push({ kind: 'too_few_turns', turn: null, message: `${trajectory.turns.length} turns, fewer than ${minTurns}` });
  }
  return issues;
}

export interface QualityReport {
  episodes: number;
  /** Episodes with at least one issue. */
  affected: number;
  affectedShare: number;
  byKind: Record<QualityKind, { issues: number; episodes: number; share: number }>;
}

/** Counts the issues already recorded on the trajectories (Trajectory.quality). */
export function summarizeQuality(trajectories: readonly Trajectory[]): QualityReport {
  const byKind = Object.fromEntries(QUALITY_KINDS.map((k) => [k, { issues: 0, episodes: 0, share: 0 }])) as QualityReport['byKind'];
  let affected = 0;
  for (const trajectory of trajectories) {
    if (trajectory.quality.length === 0) continue;
    affected++;
    const seen = new Set<QualityKind>();
    for (const issue of trajectory.quality) {
      byKind[issue.kind].issues++;
      seen.add(issue.kind);
    }
    for (const kind of seen) byKind[kind].episodes++;
  }
  const n = trajectories.length;
  for (const kind of QUALITY_KINDS) byKind[kind].share = n > 0 ? byKind[kind].episodes / n : 0;
  return { episodes: n, affected, affectedShare: n > 0 ? affected / n : 0, byKind };
}

/** The report as lines for a terminal. */
export function formatQualityReport(report: QualityReport): string[] {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const lines = [`rollout quality: ${report.episodes - report.affected}/${report.episodes} episodes clean (${pct(1 - report.affectedShare)})`];
  for (const kind of QUALITY_KINDS) {
    const k = report.byKind[kind];
    if (k.issues > 0) lines.push(`  ${kind}: ${k.issues} issues in ${k.episodes} episodes (${pct(k.share)})`);
  }
  return lines;
}

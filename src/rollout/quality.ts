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

/** Counts the issues recorded on trajectories (Trajectory.quality), one trajectory at a time. */
export class QualityTally {
  private episodes = 0;
  private affected = 0;
  private readonly issues = new Map<QualityKind, number>();
  private readonly episodesWith = new Map<QualityKind, number>();

  add(trajectory: Trajectory): void {
    this.episodes++;
    if (trajectory.quality.length === 0) return;
    this.affected++;
    const seen = new Set<QualityKind>();
    for (const issue of trajectory.quality) {
      this.issues.set(issue.kind, (this.issues.get(issue.kind) ?? 0) + 1);
      seen.add(issue.kind);
    }
    for (const kind of seen) this.episodesWith.set(kind, (this.episodesWith.get(kind) ?? 0) + 1);
  }

  report(): QualityReport {
    const n = this.episodes;
    const share = (k: number) => (n > 0 ? k / n : 0);
    const byKind = {} as QualityReport['byKind'];
    for (const kind of QUALITY_KINDS) {
      const episodes = this.episodesWith.get(kind) ?? 0;
      byKind[kind] = { issues: this.issues.get(kind) ?? 0, episodes, share: share(episodes) };
    }
    return { episodes: n, affected: this.affected, affectedShare: share(this.affected), byKind };
  }
}

export function summarizeQuality(trajectories: readonly Trajectory[]): QualityReport {
  const tally = new QualityTally();
  for (const trajectory of trajectories) tally.add(trajectory);
  return tally.report();
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

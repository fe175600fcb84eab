/**
 * The human-readable form of an evaluation: one row per policy (with the env's episode metrics and,
 * when random and the oracle were both played, the normalised score), greedy-table notes, the
 * head-to-head matrix.
 */
import { fmt, pct, table } from './output.ts';
import type { EvalReport, PolicyEval } from '../eval/evaluate.ts';
import { formatCalibration } from './calibration-report.ts';

function exactCell(p: PolicyEval): string {
  if (p.exactReturn === null) return 'n/a';
  return p.exactSource === 'greedy-table' ? `${fmt(p.exactReturn)} (greedy table)` : fmt(p.exactReturn);
}

function normalisedCell(p: PolicyEval): string {
  const score = p.normalisedScore;
  return score === null || score.value === null ? 'n/a' : `${fmt(score.value, 3)} (${score.basis})`;
}

export function formatEvalReport(report: EvalReport): string[] {
  const lines: string[] = [];
  const decoding = report.temperature === 0 ? 'greedy decoding' : `temperature ${report.temperature}`;
  lines.push(`${report.env} · ${report.policies.length} policies · ${report.episodes} episodes each on seeds ${report.firstSeed}..${report.firstSeed + report.episodes - 1} · ${decoding}`);
  lines.push(`optimal return (oracle, exact): ${report.optimalReturn === null ? 'n/a' : fmt(report.optimalReturn)}`);
  lines.push('');
  const metricNames = [...new Set(report.policies.flatMap((p) => Object.keys(p.metrics)))].sort();
  const scored = report.policies.some((p) => p.normalisedScore !== null);
  const rows = report.policies.map((p) => [
    p.policy,
    fmt(p.meanReturn),
    `[${fmt(p.ci95[0])}, ${fmt(p.ci95[1])}]`,
    pct(p.winRate),
    pct(p.drawRate),
    pct(p.lossRate),
    pct(p.invalidRate),
    exactCell(p),
    ...metricNames.map((name) => (name in p.metrics ? fmt(p.metrics[name]) : 'n/a')),
    ...(scored ? [normalisedCell(p)] : []),
  ]);
  const header = ['policy', 'mean return', '95% CI', 'win', 'draw', 'loss', 'invalid', 'exact return', ...metricNames, ...(scored ? ['normalised'] : [])];
  lines.push(...table(header, rows).split('\n'));
  if (scored) lines.push('(normalised: (policy − random) / (oracle − random), on exact returns where all three have one, else on sampled means)');
  for (const p of report.policies) {
    const extra: string[] = [];
    if (p.failed > 0) {
      const reasons = Object.entries(p.failureReasons).map(([r, n]) => `${r} x${n}`).join(', ');
      extra.push(`${p.failed} of ${p.episodes} episodes failed (${reasons}); its figures are over the other ${p.episodes - p.failed}`);
    }
    if (p.truncated > 0) extra.push(`${p.truncated} episodes truncated`);
    const greedy = p.greedyTable;
    if (greedy) {
      extra.push(
        `greedy table: exact return ${fmt(greedy.exactReturn)}, ${greedy.invalidStates} of ${greedy.states} states answered invalidly ` +
          `(${pct(greedy.invalidRate)}; an episode ends invalid with probability ${pct(greedy.invalidEndingRate)})`,
      );
      extra.push(greedy.agreement.message);
    }
    extra.push(...p.notes);
    if (extra.length === 0) continue;
    lines.push(`  ${p.policy}:`);
    for (const e of extra) lines.push(`    ${e}`);
  }
  for (const note of report.notes) lines.push(`  (${note})`);
  lines.push(...formatCalibration(report.policies));
  if (report.policies.length > 1) {
    lines.push('');
    lines.push('head-to-head (row vs column: share of seeds where the row scored higher, ties count half)');
    const names = report.policies.map((p) => p.policy);
    const matrix = names.map((a) => [a, ...names.map((b) => (a === b ? '-' : fmt(report.headToHead[a][b], 3)))]);
    lines.push(...table(['', ...names], matrix).split('\n'));
  }
  return lines;
}

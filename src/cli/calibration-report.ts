/** The human-readable calibration of report answers: per policy and question, scores then the reliability table. */
import type { QuestionCalibration } from '../eval/calibration.ts';
import type { PolicyEval } from '../eval/evaluate.ts';
import { fmt, table } from './output.ts';

function questionLines(policy: string, c: QuestionCalibration): string[] {
  const scores =
    c.kind === 'quantile' ? `pinball ${fmt(c.pinball)}` : `Brier ${fmt(c.brier)} · log ${fmt(c.log)}`;
  const lines = [
    `${policy} · ${c.question} (${c.kind}) · ${c.decisions} decisions · ${scores} · ECE ${fmt(c.reliability.ece)}` +
      ` · missing ${c.missing} · malformed ${c.malformed}`,
  ];
  const rows = c.reliability.bins
    .filter((b) => b.count > 0)
    .map((b) => [`${b.lo.toFixed(1)}-${b.hi.toFixed(1)}`, fmt(b.meanForecast, 3), fmt(b.observedFrequency, 3), String(b.count)]);
  const header = c.kind === 'quantile' ? ['level', 'mean level', 'share at or below', 'count'] : ['bin', 'mean forecast', 'observed', 'count'];
  if (rows.length > 0) lines.push(...table(header, rows).split('\n').map((l) => `  ${l}`));
  return lines;
}

/** Lines for every policy that answered report questions; none when the env asked none. */
export function formatCalibration(policies: readonly PolicyEval[]): string[] {
  const lines: string[] = [];
  for (const p of policies) for (const c of p.calibration ?? []) lines.push(...questionLines(p.policy, c));
  if (lines.length === 0) return [];
  return ['', 'report questions: calibration against the realised outcomes (losses: lower is better)', ...lines];
}

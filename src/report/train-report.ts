/**
 * The files `spindle train` leaves in its run folder: learning-curve.svg (the evaluated return
 * against the step, the training reward, the warm start, the baselines and the optimum as
 * horizontal lines) and report.md (setup, phases and their share of wall time, the warm start, the
 * final evaluation beside the baselines with the env's episode metrics and the normalised scores,
 * Blackjack's strategy chart of the trained policy, the evaluations along the way).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MetricPoint } from '../core/trajectory.ts';
import type { EvalReport, PolicyEval } from '../eval/evaluate.ts';
import { blackjackStrategyChart } from '../eval/blackjack-strategy-chart.ts';
import { normalisedScoreLine } from '../eval/normalised-score.ts';
import type { TableMove } from '../train/greedy-table-value.ts';
import type { HandOverSelection } from '../train/trainer-state.ts';
import type { AveragedSteps } from '../train/weight-average.ts';
import { learningCurveSvg, type CurveSeries, type ReferenceLine } from './learning-curve.ts';

export const CURVE_FILE = 'learning-curve.svg';
export const REPORT_FILE = 'report.md';
/** trainer-final.ts's WARM_START_POLICY (not imported: that module loads the model engine). */
const WARM_START_POLICY = 'warm-start';

export interface TrainReportInput {
  runId: string;
  env: string;
  envOptions: Record<string, unknown>;
  /** The resolved config, printed as JSON. */
  config: Record<string, unknown>;
  steps: number;
  episodes: number;
  wallSeconds: number;
  metrics: readonly MetricPoint[];
  /** `from`: the run whose warm start this one reused (its seconds were spent there). */
  warmStart: { steps: number; answerSteps: number; reached: boolean; invalidRate: number | null; seconds: number; from?: string | null } | null;
  finalEval: EvalReport | null;
  /** The trained policy's name in finalEval. */
  trainedPolicy: string;
  /** The steps whose weights the trained policy averages; null: one step's weights. */
  weightAverage: AveragedSteps | null;
  /** How the trained policy was chosen on validation seeds; null: not chosen (the average, else the last step's weights). */
  handOver: HandOverSelection | null;
  /** Seconds of the final evaluation (not in the metrics). */
  finalEvalSeconds: number;
}

/** Values of one metric by step, in step order. */
export function metricSeries(metrics: readonly MetricPoint[], name: string): { x: number; y: number }[] {
  return metrics.filter((m) => m.name === name).map((m) => ({ x: m.step, y: m.value })).sort((a, b) => a.x - b.x);
}

/** Trailing moving average over `window` points. */
export function smooth(points: readonly { x: number; y: number }[], window: number): { x: number; y: number }[] {
  return points.map((p, i) => {
    const from = Math.max(0, i - window + 1);
    let sum = 0;
    for (let j = from; j <= i; j++) sum += points[j].y;
    return { x: p.x, y: sum / (i - from + 1) };
  });
}

const LINE_COLORS: Record<string, string> = { random: '#d62728', 'warm-start': '#9467bd', 'stick-at-17': '#8c564b', 'always-stick': '#e377c2', oracle: '#2ca02c' };

/** The value a policy is drawn at: its exact return where known, else its mean return. */
function policyValue(p: PolicyEval): number {
  return p.exactReturn ?? p.meanReturn;
}

export function trainCurveSvg(input: TrainReportInput): string {
  const series: CurveSeries[] = [];
  const exact = metricSeries(input.metrics, 'eval/exact_return');
  if (exact.length > 0) series.push({ name: 'exact return (greedy table)', points: exact, color: '#1f77b4', dots: true });
  series.push({ name: 'greedy return, held-out seeds', points: metricSeries(input.metrics, 'eval/mean_return'), color: '#ff7f0e', dots: true });
  const reward = metricSeries(input.metrics, 'reward/mean').filter((p) => p.x > 0);
  if (reward.length > 0) series.push({ name: 'training reward (sampled, 10-step mean)', points: smooth(reward, 10), color: '#7f7f7f' });
  const lines: ReferenceLine[] = [];
  if (input.finalEval) {
    if (input.finalEval.optimalReturn !== null) lines.push({ name: 'optimal', y: input.finalEval.optimalReturn, color: '#2ca02c', dashed: false });
    for (const p of input.finalEval.policies) {
      if (p.policy === input.trainedPolicy || p.policy === 'oracle') continue;
      lines.push({ name: p.policy, y: policyValue(p), color: LINE_COLORS[p.policy] ?? '#17becf' });
    }
  }
  return learningCurveSvg({ title: `${input.env}: return vs RL step (run ${input.runId})`, xLabel: 'RL step', yLabel: 'return', series, lines });
}

function fmt(x: number | null | undefined, digits = 4): string {
  return x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(digits);
}

function pct(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : `${(100 * x).toFixed(1)}%`;
}

/** Σ of a timing metric over the run. */
function total(metrics: readonly MetricPoint[], name: string): number {
  return metrics.filter((m) => m.name === name).reduce((a, m) => a + m.value, 0);
}

export function trainReportMarkdown(input: TrainReportInput): string {
  const lines: string[] = [];
  lines.push(`# Training report: ${input.env} (run ${input.runId})`, '');
  lines.push(`- env options: \`${JSON.stringify(input.envOptions)}\``);
  lines.push(`- RL steps: ${input.steps}, episodes played in RL: ${input.episodes}`);
  lines.push(`- wall time: ${input.wallSeconds.toFixed(1)} s (model, warm start, RL, evaluations)`, '');
  lines.push(`![learning curve](${CURVE_FILE})`, '');

  lines.push('## Where the time went', '');
  const reusedFrom = input.warmStart?.from ?? null;
  const warmSeconds = reusedFrom === null ? (input.warmStart?.seconds ?? 0) : 0;
  const phases: [string, number][] = [
    ['warm start', warmSeconds],
    ['rollouts', total(input.metrics, 'time/rollout_s')],
    ['advantages + samples', total(input.metrics, 'time/advantage_s')],
    ['training', total(input.metrics, 'time/train_s')],
    ['evaluations', total(input.metrics, 'time/eval_s')],
    ['checkpoints', total(input.metrics, 'time/checkpoint_s')],
    ['choosing the handed-over policy', total(input.metrics, 'time/select_s')],
    ['final evaluation', input.finalEvalSeconds],
  ];
  const accounted = phases.reduce((a, [, s]) => a + s, 0);
  phases.push(['other (model creation, store, ...)', Math.max(0, input.wallSeconds - accounted)]);
  lines.push('| phase | seconds | share |', '|---|---:|---:|');
  for (const [name, s] of phases) lines.push(`| ${name} | ${s.toFixed(1)} | ${pct(input.wallSeconds > 0 ? s / input.wallSeconds : NaN)} |`);
  lines.push('');

  if (input.warmStart) {
    lines.push('## Warm start', '');
    lines.push(
      (reusedFrom === null ? '' : `Reused from run ${reusedFrom} (its time there is not counted here): `) +
        `${input.warmStart.steps} supervised steps on random-policy demonstrations (the action format only) in ${input.warmStart.seconds.toFixed(1)} s` +
        (input.warmStart.answerSteps > 0 ? `, the last ${input.warmStart.answerSteps} on every legal action's answer side by side (so it prefers no action)` : '') +
        '; ' +
        `invalid answers at the last check: ${pct(input.warmStart.invalidRate)} (${input.warmStart.reached ? 'target reached' : 'target NOT reached'}).`,
      '',
    );
  }

  if (input.finalEval) {
    const e = input.finalEval;
    lines.push('## Final evaluation', '');
    lines.push(`${e.episodes} held-out seeds from ${e.firstSeed}, greedy decoding, every policy on the same seeds. Optimal return: ${fmt(e.optimalReturn)}.`, '');
    lines.push(trainedPolicyLine(input), '');
    const metricNames = [...new Set(e.policies.flatMap((p) => Object.keys(p.metrics)))].sort();
    const scored = e.policies.some((p) => p.normalisedScore !== null);
    const header = ['policy', 'mean return', '95% CI', 'exact return', 'win', 'draw', 'loss', 'invalid', ...metricNames, ...(scored ? ['normalised'] : [])];
    lines.push(`| ${header.join(' | ')} |`, `|---|---:|---|${'---:|'.repeat(header.length - 3)}`);
    for (const p of e.policies) {
      const name = p.policy === input.trainedPolicy ? `**${p.policy} (trained)**` : p.policy;
      const exact = p.exactReturn === null ? 'n/a' : `${fmt(p.exactReturn)}${p.exactSource === 'greedy-table' ? ' (greedy table)' : ''}`;
      const cells = [name, fmt(p.meanReturn), `[${fmt(p.ci95[0])}, ${fmt(p.ci95[1])}]`, exact, pct(p.winRate), pct(p.drawRate), pct(p.lossRate), pct(p.invalidRate)];
      for (const m of metricNames) cells.push(fmt(p.metrics[m]));
      if (scored) cells.push(p.normalisedScore?.value == null ? 'n/a' : `${fmt(p.normalisedScore.value)} (${p.normalisedScore.basis})`);
      lines.push(`| ${cells.join(' | ')} |`);
    }
    lines.push('');
    if (metricNames.length > 0) lines.push(`Env metrics (${metricNames.join(', ')}): per-episode means of what the env records.`, '');
    for (const p of e.policies) {
      if (p.policy !== input.trainedPolicy && p.policy !== WARM_START_POLICY) continue;
      const label = p.policy === input.trainedPolicy ? 'trained' : 'warm start';
      lines.push(`- ${label}: ${p.normalisedScore ? normalisedScoreLine(p.normalisedScore, label) : 'normalised score n/a (random and the oracle are not both in the evaluation)'}`);
    }
    for (const p of e.policies) {
      if (p.greedyTable) lines.push(`- ${p.policy}: greedy table ${p.greedyTable.invalidStates}/${p.greedyTable.states} states invalid; ${p.greedyTable.agreement.message}`);
    }
    for (const p of e.policies) {
      if (p.failed > 0) lines.push(`- ${p.policy}: ${p.failed} of ${p.episodes} episodes failed (${Object.entries(p.failureReasons).map(([why, n]) => `${n}× ${why}`).join('; ')})`);
    }
    for (const note of e.notes) lines.push(`- ${note}`);
    lines.push('');
    const table = e.policies.find((p) => p.policy === input.trainedPolicy)?.greedyTable;
    if (table) lines.push(...strategyChartSection(table.moves, input.envOptions));
  }

  if (input.handOver) lines.push(...handOverSection(input.handOver));

  const evalSteps = metricSeries(input.metrics, 'eval/mean_return');
  if (evalSteps.length > 0) {
    const exact = new Map(metricSeries(input.metrics, 'eval/exact_return').map((p) => [p.x, p.y]));
    const win = new Map(metricSeries(input.metrics, 'eval/win_rate').map((p) => [p.x, p.y]));
    const invalid = new Map(metricSeries(input.metrics, 'eval/invalid_rate').map((p) => [p.x, p.y]));
    const episodes = new Map(metricSeries(input.metrics, 'episodes/total').map((p) => [p.x, p.y]));
    lines.push('## Evaluations during training', '');
    lines.push('| step | episodes | greedy mean return | exact return | win | invalid |', '|---:|---:|---:|---:|---:|---:|');
    for (const p of evalSteps) {
      lines.push(`| ${p.x} | ${episodes.get(p.x) ?? 0} | ${fmt(p.y)} | ${fmt(exact.get(p.x))} | ${pct(win.get(p.x))} | ${pct(invalid.get(p.x))} |`);
    }
    lines.push('');
  }
  lines.push('## Config', '', '```json', JSON.stringify(input.config, null, 2), '```', '');
  return lines.join('\n');
}

/** Which weights the trained policy is. */
function trainedPolicyLine(input: TrainReportInput): string {
  const w = input.weightAverage;
  const chosen = input.handOver?.chosen;
  const why = input.handOver ? ', chosen on validation seeds (below)' : '';
  if (w) return `The trained policy is the mean of the weights after each of steps ${w.firstStep}–${w.lastStep} (${w.count} snapshots; the learning curve's evaluations are of each step's own weights)${why}.`;
  if (typeof chosen === 'number') return `The trained policy is RL's own weights after step ${chosen}${why}.`;
  return "The trained policy is the last step's weights.";
}

/** The candidates for the handed-over policy and their greedy returns on the validation seeds. */
function handOverSection(h: HandOverSelection): string[] {
  const lines = [
    '## Choosing the handed-over policy',
    '',
    `Each candidate played ${h.episodes} validation seeds from ${h.firstSeed} (apart from the evaluation's) greedily; the highest mean return was handed over.`,
    '',
    '| weights | validation mean return | 95% CI | failed |',
    '|---|---:|---|---:|',
  ];
  for (const c of h.candidates) {
    const name = c.weights === 'average' ? 'weight average' : `step ${c.weights}`;
    lines.push(`| ${c.weights === h.chosen ? `**${name} (handed over)**` : name} | ${fmt(c.meanReturn)} | [${fmt(c.ci95[0])}, ${fmt(c.ci95[1])}] | ${c.failed} |`);
  }
  lines.push('');
  return lines;
}

/** The trained policy's Blackjack greedy table as a strategy chart against the optimal moves. */
function strategyChartSection(moves: Record<string, TableMove>, envOptions: Record<string, unknown>): string[] {
  const chart = blackjackStrategyChart(moves, { natural: envOptions.natural === true, sab: envOptions.sab === true });
  const cost = chart.differences.reduce((sum, d) => sum + d.cost, 0);
  const worst = [...chart.differences].sort((a, b) => b.cost - a.cost).slice(0, 5);
  return [
    '## Strategy chart (trained policy, greedy)',
    '',
    `H hit, S stick, × no legal answer; **bold**: differs from the optimal move (${chart.differences.length} of ${chart.states} states, summed action-value gap ${fmt(cost)}).` +
      (worst.length > 0 ? ` Costliest: ${worst.map((d) => `${d.key} ${d.chosen} (optimal ${d.optimal}, −${fmt(d.cost)})`).join(', ')}.` : ''),
    '',
    chart.markdown,
    '',
  ];
}

/** Writes learning-curve.svg and report.md into the run folder; returns their paths. */
export function writeTrainReport(runDir: string, input: TrainReportInput): { curve: string; report: string } {
  const curve = join(runDir, CURVE_FILE);
  const report = join(runDir, REPORT_FILE);
  writeFileSync(curve, trainCurveSvg(input));
  writeFileSync(report, trainReportMarkdown(input));
  return { curve, report };
}

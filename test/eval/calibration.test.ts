/** Calibration: the reliability table and ECE by hand; the oracle's hmm forecasts calibrated, random's not. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveEpisodeSettings } from '../../src/agent/episode-settings.ts';
import type { Trajectory, Turn } from '../../src/core/trajectory.ts';
import type { ReportQuestion, ReportRecord } from '../../src/envs/env.ts';
import { hmmSpec } from '../../src/envs/hmm/spec.ts';
import { calibrationReport } from '../../src/eval/calibration.ts';
import { evaluatePolicies } from '../../src/eval/evaluate.ts';
import { addForecast, emptyReliabilitySums, reliabilityTable } from '../../src/eval/reliability.ts';
import { formatEvalReport } from '../../src/cli/eval-report.ts';
import { oraclePolicy, randomPolicy } from '../../src/policy/scripted.ts';

test('reliability table and ECE by hand', () => {
  const sums = emptyReliabilitySums();
  addForecast(sums, 0.05, 0);
  addForecast(sums, 0.15, 1);
  addForecast(sums, 0.15, 0);
  addForecast(sums, 1, 1);
  const table = reliabilityTable(sums);
  assert.equal(table.count, 4);
  assert.deepEqual(table.bins.map((b) => b.count), [1, 2, 0, 0, 0, 0, 0, 0, 0, 1]);
  assert.equal(table.bins[1].observedFrequency, 0.5);
  assert.equal(table.bins[2].meanForecast, null);
  // ¼·|0.05 − 0| + ½·|0.15 − 0.5| + ¼·|1 − 1|
  assert.ok(Math.abs(table.ece! - 0.1875) < 1e-12);
  assert.equal(reliabilityTable(emptyReliabilitySums()).ece, null);
  assert.throws(() => addForecast(sums, 1.2, 1), /in \[0, 1\]/);
});

const turnWith = (index: number, args: Record<string, unknown>, report: ReportRecord | null): Turn =>
  ({ index, actions: [{ id: `c${index}`, name: 'order', arguments: args }], info: report ? { report } : {} }) as unknown as Turn;

test('quantile answers: coverage of the level, pinball loss, missing and malformed counted', () => {
  const q: ReportQuestion = { name: 'd', kind: 'quantile', level: 0.75, range: [0, 20], text: 'd' };
  const rec = (demand: number): ReportRecord => ({ questions: [q], targets: { d: 10 }, outcomes: { d: demand } });
  const trajectory = {
    env: 'newsvendor',
    turns: [turnWith(0, { d: 10 }, rec(12)), turnWith(1, { d: 10 }, rec(4)), turnWith(2, {}, rec(4)), turnWith(3, { d: 99 }, rec(4)), turnWith(4, {}, null)],
  } as unknown as Trajectory;
  const [c] = calibrationReport([trajectory]);
  assert.equal(c.decisions, 4);
  assert.equal(c.missing, 1);
  assert.equal(c.malformed, 1);
  // one of the two answers covered the outcome, at level 0.75
  assert.equal(c.reliability.bins[7].count, 2);
  assert.equal(c.reliability.bins[7].observedFrequency, 0.5);
  assert.ok(Math.abs(c.reliability.ece! - 0.25) < 1e-12);
  // (0.75·2 + 0.25·6 + 15 + 15) / 4, the worst being 0.75·20
  assert.ok(Math.abs(c.pinball! - 33 / 4) < 1e-12);
  assert.equal(c.brier, null);
});

test('hmm, 2000 episodes: the oracle posterior is calibrated and beats random answers', async () => {
  const seeds = Array.from({ length: 2000 }, (_, i) => i);
  const options = hmmSpec.options.parse({ report: true, horizon: 4 });
  const forecastPart: Record<string, number> = { oracle: 0, random: 0 };
  const report = await evaluatePolicies({
    onTrajectory: (t) => {
      forecastPart[t.policy] += t.rewardParts.forecast;
    },
    spec: hmmSpec,
    options,
    policies: [oraclePolicy(), randomPolicy()],
    seeds,
    episode: resolveEpisodeSettings({ temperature: 0 }),
  });
  const [oracle, random] = report.policies.map((p) => p.calibration![0]);
  assert.equal(oracle.decisions, 8000);
  assert.equal(oracle.missing + oracle.malformed + random.missing + random.malformed, 0);
  assert.ok(oracle.reliability.ece! < 0.03, `oracle ECE ${oracle.reliability.ece}`);
  assert.ok(random.reliability.ece! > 0.1, `random ECE ${random.reliability.ece}`);
  assert.ok(oracle.brier! < random.brier! - 0.1, `Brier ${oracle.brier} vs ${random.brier}`);
  assert.ok(oracle.log! < random.log!);
  // the `forecast` reward part (default: excess loss over the oracle) is 0 for the oracle, negative for random
  assert.ok(Math.abs(forecastPart.oracle) < 1e-9, `oracle forecast part ${forecastPart.oracle}`);
  assert.ok(forecastPart.random / 2000 < -0.5, `random forecast part ${forecastPart.random / 2000}`);
  const text = formatEvalReport(report).join('\n');
  assert.match(text, /oracle · p_state \(choice\) · 8000 decisions · Brier/);
});

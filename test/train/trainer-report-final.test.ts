/** The final evaluation in train's report.md and --json summary: env metrics per policy, the normalised scores, Blackjack's strategy chart. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveEpisodeSettings } from '../../src/agent/episode-settings.ts';
import { banditSpec } from '../../src/envs/bandit/spec.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { blackjackStrategyChart } from '../../src/eval/blackjack-strategy-chart.ts';
import { evaluatePolicies } from '../../src/eval/evaluate.ts';
import { oraclePolicy, randomPolicy } from '../../src/policy/scripted.ts';
import { trainReportMarkdown } from '../../src/report/train-report.ts';
import type { FinalEval } from '../../src/train/trainer-final.ts';
import { finalSummary } from '../../src/train/trainer-report-summary.ts';
import { fixedTextPolicy, pullText } from '../eval/fixed-text-policy.ts';

test('bandit: regret and normalised scores of the trained policy and the warm start reach the summary and report.md', async () => {
  const report = await evaluatePolicies({
    spec: banditSpec,
    options: banditSpec.options.parse({}),
    policies: [fixedTextPolicy('run:r', pullText(1)), fixedTextPolicy('warm-start', pullText(2)), randomPolicy(), oraclePolicy()],
    seeds: Array.from({ length: 100 }, (_, i) => i),
    episode: resolveEpisodeSettings({ temperature: 0, maxTokens: 32 }),
  });
  const [trained, warm, random, oracle] = report.policies;
  const final: FinalEval = { report, trained, warmStart: warm, baselines: { 'warm-start': warm.meanReturn, random: random.meanReturn, oracle: oracle.meanReturn } };
  const summary = finalSummary(final, 12);
  const score = (p: typeof trained) => (p.meanReturn - random.meanReturn) / (oracle.meanReturn - random.meanReturn);
  assert.equal(summary.normalisedScoreBasis, 'sampled');
  assert.ok(Math.abs(summary.normalisedScore! - score(trained)) < 1e-12);
  assert.equal(summary.warmStartNormalisedScoreBasis, 'sampled');
  assert.ok(Math.abs(summary.warmStartNormalisedScore! - score(warm)) < 1e-12);
  assert.deepEqual(summary.eval.metrics, { regret: trained.metrics.regret });
  assert.ok(trained.metrics.regret > 0.5, `a fixed arm regrets ${trained.metrics.regret}`);
  assert.deepEqual(summary.warmStart, { meanReturn: warm.meanReturn, exactReturn: null, invalidRate: 0, failed: 0, steps: 12, metrics: warm.metrics });
  // A policy none of whose episodes was scored (all failed) has no figures: null, never NaN (the store refuses NaN).
  const dead = { ...warm, meanReturn: NaN, ci95: [NaN, NaN] as [number, number], winRate: NaN, invalidRate: NaN, meanTurns: NaN, failed: 100, failureReasons: { 'engine: out of memory': 100 } };
  const deadSummary = finalSummary({ ...final, trained: dead, warmStart: dead, baselines: { ...final.baselines, 'warm-start': NaN } }, 12);
  assert.deepEqual([deadSummary.eval.meanReturn, deadSummary.eval.ci95, deadSummary.eval.failed, deadSummary.warmStart!.meanReturn, deadSummary.baselines['warm-start']], [null, [null, null], 100, null, null]);
  assert.deepEqual(deadSummary.eval.failureReasons, { 'engine: out of memory': 100 });
  assert.doesNotThrow(() => JSON.stringify(deadSummary));
  assert.deepEqual(Object.keys(summary.baselineMetrics), ['warm-start', 'random', 'oracle']);
  // The oracle plays Bayes-optimally and regrets against the best arm too (less than a fixed arm).
  assert.equal(summary.baselineMetrics.oracle.regret, oracle.metrics.regret);
  assert.ok(oracle.metrics.regret > 0 && oracle.metrics.regret < trained.metrics.regret);
  // Plain JSON all the way through.
  assert.deepEqual(JSON.parse(JSON.stringify(summary)), summary);

  const md = trainReportMarkdown({
    runId: 'r',
    env: 'bandit',
    envOptions: {},
    config: {},
    steps: 1,
    episodes: 10,
    wallSeconds: 5,
    metrics: [],
    warmStart: null,
    finalEval: report,
    trainedPolicy: 'run:r',
    weightAverage: null,
    handOver: null,
    finalEvalSeconds: 1,
  });
  assert.match(md, /The trained policy is the last step's weights\./);
  assert.match(md, /\| policy \| mean return \| 95% CI \| exact return \| win \| draw \| loss \| invalid \| regret \| normalised \|\n\|---\|---:\|---\|(---:\|){7}\n/);
  const row = md.split('\n').find((line) => line.startsWith('| **run:r (trained)** |'))!;
  assert.ok(row.endsWith(`| ${trained.metrics.regret.toFixed(4)} | ${score(trained).toFixed(4)} (sampled) |`), row);
  assert.ok(
    md.includes(
      `- trained: normalised score, sampled returns: (trained − random) / (oracle − random) = (${trained.meanReturn.toFixed(4)} − ${random.meanReturn.toFixed(4)}) / ` +
        `(${oracle.meanReturn.toFixed(4)} − ${random.meanReturn.toFixed(4)}) = ${score(trained).toFixed(4)}`,
    ),
    md,
  );
  assert.match(md, /- warm start: normalised score, sampled returns: \(warm start − random\)/);
});

test('without random and the oracle the scores are null and the report says so', async () => {
  const report = await evaluatePolicies({
    spec: banditSpec,
    options: banditSpec.options.parse({}),
    policies: [fixedTextPolicy('run:r', pullText(1))],
    seeds: [1, 2, 3],
    episode: resolveEpisodeSettings({ temperature: 0, maxTokens: 32 }),
  });
  const summary = finalSummary({ report, trained: report.policies[0], warmStart: null, baselines: {} }, null);
  assert.deepEqual([summary.normalisedScore, summary.normalisedScoreBasis, summary.warmStartNormalisedScore, summary.warmStartNormalisedScoreBasis, summary.warmStart], [null, null, null, null, null]);
  const md = trainReportMarkdown({ runId: 'r', env: 'bandit', envOptions: {}, config: {}, steps: 1, episodes: 1, wallSeconds: 1, metrics: [], warmStart: null, finalEval: report, trainedPolicy: 'run:r', weightAverage: null, handOver: null, finalEvalSeconds: 0 });
  assert.match(md, /- trained: normalised score n\/a \(random and the oracle are not both in the evaluation\)/);
  assert.ok(!md.includes('| normalised |'));
});

test('blackjack: the trained policy greedy table becomes a strategy chart with its differences from the optimum', async () => {
  const report = await evaluatePolicies({
    spec: blackjackSpec,
    options: blackjackSpec.options.parse({}),
    policies: [fixedTextPolicy('run:r', '<tool_call>{"name": "stick", "arguments": {}}</tool_call>')],
    seeds: [1, 2, 3],
    episode: resolveEpisodeSettings({ temperature: 0, maxTokens: 32 }),
  });
  const md = trainReportMarkdown({ runId: 'r', env: 'blackjack', envOptions: { natural: false, sab: false }, config: {}, steps: 1, episodes: 1, wallSeconds: 1, metrics: [], warmStart: null, finalEval: report, trainedPolicy: 'run:r', weightAverage: { firstStep: 150, lastStep: 250, count: 101 }, handOver: null, finalEvalSeconds: 0 });
  assert.match(md, /The trained policy is the mean of the weights after each of steps 150–250 \(101 snapshots;/);
  // A policy chosen on validation seeds says which weights it is, and lists every candidate.
  const handOver = {
    firstSeed: 400_000_000,
    episodes: 300,
    candidates: [
      { weights: 'average' as const, meanReturn: 6.017, ci95: [5.694, 6.339] as [number, number], failed: 0 },
      { weights: 250, meanReturn: 5.997, ci95: [5.671, 6.322] as [number, number], failed: 0 },
      { weights: 200, meanReturn: 6.123, ci95: [5.804, 6.443] as [number, number], failed: 1 },
    ],
    chosen: 200,
  };
  const chosen = trainReportMarkdown({ runId: 'r', env: 'blackjack', envOptions: { natural: false, sab: false }, config: {}, steps: 1, episodes: 1, wallSeconds: 1, metrics: [], warmStart: null, finalEval: report, trainedPolicy: 'run:r', weightAverage: null, handOver, finalEvalSeconds: 0 });
  assert.match(chosen, /The trained policy is RL's own weights after step 200, chosen on validation seeds \(below\)\./);
  assert.match(chosen, /Each candidate played 300 validation seeds from 400000000 \(apart from the evaluation's\) greedily/);
  assert.match(chosen, /\| weight average \| 6\.0170 \| \[5\.6940, 6\.3390\] \| 0 \|\n\| step 250 \| 5\.9970 \| \[5\.6710, 6\.3220\] \| 0 \|\n\| \*\*step 200 \(handed over\)\*\* \| 6\.1230 \| \[5\.8040, 6\.4430\] \| 1 \|/);
  assert.doesNotMatch(md, /## Choosing the handed-over policy/);
  // Always stick: every state where the optimum hits is bold (hard 4..11 against every dealer card among them).
  const chart = blackjackStrategyChart(report.policies[0].greedyTable!.moves, { natural: false, sab: false });
  assert.ok(chart.differences.length >= 80 && chart.differences.every((d) => d.chosen === 'stick' && d.optimal === 'hit'));
  assert.ok(md.includes(`## Strategy chart (trained policy, greedy)`));
  assert.ok(md.includes(`(${chart.differences.length} of 280 states,`));
  assert.match(md, /\| hard 8 (\| \*\*S\*\* ){10}\|/);
  assert.match(md, /\| hard 20 (\| S ){10}\|/);
});

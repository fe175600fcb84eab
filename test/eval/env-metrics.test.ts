/** The env's own episode metrics in an evaluation: bandit regret per policy, in the report and the table. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveEpisodeSettings } from '../../src/agent/episode-settings.ts';
import { formatEvalReport } from '../../src/cli/eval-report.ts';
import type { Trajectory, Turn } from '../../src/core/trajectory.ts';
import { armProbabilities } from '../../src/envs/bandit/env.ts';
import { banditSpec } from '../../src/envs/bandit/spec.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { EnvMetricTally, episodeEnvMetrics } from '../../src/eval/env-metrics.ts';
import { evaluatePolicies } from '../../src/eval/evaluate.ts';
import { oraclePolicy, randomPolicy } from '../../src/policy/scripted.ts';
import { fixedTextPolicy, pullText } from './fixed-text-policy.ts';

const seeds = (n: number) => Array.from({ length: n }, (_, i) => 100 + i);

function trajectory(status: Trajectory['status'], infos: Record<string, unknown>[]): Trajectory {
  const turns = infos.map((info, index) => ({ index, info }) as unknown as Turn);
  return { status, turns } as unknown as Trajectory;
}

test('episode metrics: finite numbers under info.metrics, a later step replacing an earlier one; failed episodes left out', () => {
  const t = trajectory('completed', [{ metrics: { a: 1, b: 'x' } }, {}, { metrics: { a: 3, c: NaN, d: 2 } }, { metrics: [5] }]);
  assert.deepEqual(episodeEnvMetrics(t), { a: 3, d: 2 });
  const tally = new EnvMetricTally();
  tally.add(t);
  tally.add(trajectory('truncated', [{ metrics: { a: 5 } }]));
  tally.add(trajectory('failed', [{ metrics: { a: 100, e: 1 } }]));
  assert.deepEqual(tally.report(), { means: { a: 4, d: 2 }, counts: { a: 2, d: 1 } });
});

test('bandit regret per policy: the exact regret of a fixed arm, about the expected regret of random and of the Bayes-optimal oracle', async () => {
  const options = banditSpec.options.parse({ k: 3, horizon: 10 });
  const n = 400;
  const report = await evaluatePolicies({
    spec: banditSpec,
    options,
    policies: [fixedTextPolicy('arm-1', pullText(1)), randomPolicy(), oraclePolicy()],
    seeds: seeds(n),
    episode: resolveEpisodeSettings({ temperature: 0, maxTokens: 32 }),
  });
  const [arm1, random, oracle] = report.policies;
  // Regret of a policy on a seed is horizon * max p minus the sum of the pulled arms' p.
  let arm1Regret = 0;
  let randomExpected = 0;
  let bestArmReturn = 0;
  for (const seed of seeds(n)) {
    const p = armProbabilities(seed, 3);
    const best = Math.max(...p);
    arm1Regret += (10 * (best - p[0])) / n;
    randomExpected += (10 * (best - (p[0] + p[1] + p[2]) / 3)) / n;
    bestArmReturn += (10 * best) / n;
  }
  assert.deepEqual(Object.keys(arm1.metrics), ['regret']);
  assert.ok(Math.abs(arm1.metrics.regret - arm1Regret) < 1e-9, `arm-1 ${arm1.metrics.regret} vs ${arm1Regret}`);
  // The Bayes-optimal oracle earns 6.4096 on average (bayes.ts); the sum of its pulled arms' p has sd < 2.5 a seed, so 400 seeds put its mean within 0.4 (3 sd).
  const oracleExpected = bestArmReturn - banditSpec.exact!.optimalReturn!(options);
  assert.ok(Math.abs(oracle.metrics.regret - oracleExpected) < 0.4, `oracle ${oracle.metrics.regret} vs ${oracleExpected}`);
  // Random's per-seed regret has sd < 3 here: 400 episodes put its mean within ~0.15 of the expectation (3 sd < 0.45).
  assert.ok(Math.abs(random.metrics.regret - randomExpected) < 0.45, `random ${random.metrics.regret} vs ${randomExpected}`);
  assert.ok(random.metrics.regret > oracle.metrics.regret + 1);
  for (const p of report.policies) assert.ok(!p.notes.some((note) => note.startsWith('env metric')), p.notes.join('; '));

  const text = formatEvalReport(report);
  const header = text.find((line) => line.startsWith('policy '))!;
  assert.match(header, /exact return +regret +normalised$/);
  assert.match(text.find((line) => line.startsWith('oracle '))!, new RegExp(` ${oracle.metrics.regret.toFixed(4)} +1\\.000 \\(sampled\\)$`));
  assert.ok(text.some((line) => line.startsWith('arm-1 ') && line.includes(` ${arm1.metrics.regret.toFixed(4)} `)), text.join('\n'));
});

test('episodes that end on an invalid answer report no regret, and a note says over how many the mean is', async () => {
  const options = banditSpec.options.parse({ k: 2, horizon: 1 });
  // Junk on its first 9 calls: played one episode at a time, the first 3 episodes use up their 2 retries.
  let calls = 0;
  const valid = fixedTextPolicy('late', pullText(2));
  const late = { ...valid, complete: (request: Parameters<typeof valid.complete>[0]) => (++calls <= 9 ? fixedTextPolicy('late', 'no idea') : valid).complete(request) };
  const report = await evaluatePolicies({
    spec: banditSpec,
    options,
    policies: [late, fixedTextPolicy('junk', 'no idea')],
    seeds: seeds(20),
    concurrency: 1,
    episode: resolveEpisodeSettings({ temperature: 0, maxTokens: 16 }),
  });
  const [p, junk] = report.policies;
  assert.equal(p.invalidEndingRate, 3 / 20);
  assert.ok(p.metrics.regret >= 0);
  assert.ok(p.notes.includes('env metric regret: reported by 17 of 20 scored episodes (its mean is over those)'), p.notes.join('; '));
  assert.deepEqual(junk.metrics, {});
  // No random or oracle in the evaluation: no normalised score, no column.
  assert.equal(p.normalisedScore, null);
  assert.ok(!formatEvalReport(report).some((line) => line.includes('normalised')));

  // Envs that record no metrics leave the map empty and the table without metric columns.
  const bj = await evaluatePolicies({ spec: blackjackSpec, options: blackjackSpec.options.parse({}), policies: [randomPolicy()], seeds: seeds(20), episode: resolveEpisodeSettings({}) });
  assert.deepEqual(bj.policies[0].metrics, {});
  assert.match(formatEvalReport(bj).find((line) => line.startsWith('policy '))!, /exact return$/);
});

/** The normalised score (random = 0, oracle = 1): its basis, its null cases, and its figures in an evaluation. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveEpisodeSettings } from '../../src/agent/episode-settings.ts';
import { formatEvalReport } from '../../src/cli/eval-report.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { evaluatePolicies } from '../../src/eval/evaluate.ts';
import { normalisedScore, normalisedScoreLine } from '../../src/eval/normalised-score.ts';
import { oraclePolicy, randomPolicy, stickAtPolicy } from '../../src/policy/scripted.ts';
import { textPolicy } from './text-policies.ts';

const v = (policy: string, meanReturn: number, exactReturn: number | null) => ({ policy, meanReturn, exactReturn });

test('exact returns when the policy, random and the oracle all have one, otherwise every sampled mean', () => {
  const policies = [v('p', 0.1, 0.2), v('random', -0.5, -0.4), v('oracle', 0.4, 0.6), v('llm', 0.3, null)];
  assert.deepEqual(normalisedScore(policies, 'p', null), { value: (0.2 + 0.4) / (0.6 + 0.4), basis: 'exact', policy: 0.2, random: -0.4, oracle: 0.6 });
  // No exact value for the policy: all three figures are sampled means.
  assert.deepEqual(normalisedScore(policies, 'llm', 0.6), { value: (0.3 + 0.5) / 0.9, basis: 'sampled', policy: 0.3, random: -0.5, oracle: 0.4 });
  // The oracle's exact value may come from the env's optimal return.
  const noOracleExact = [v('p', 0.1, 0.2), v('random', -0.5, -0.4), v('oracle', 0.4, null)];
  assert.equal(normalisedScore(noOracleExact, 'p', 0.6)!.basis, 'exact');
  assert.equal(normalisedScore(noOracleExact, 'p', null)!.basis, 'sampled');
  assert.equal(normalisedScore(policies, 'random', null)!.value, 0);
  assert.equal(normalisedScore(policies, 'oracle', null)!.value, 1);
});

test('null without random or the oracle, and a null value when they are worth the same or a figure is missing', () => {
  assert.equal(normalisedScore([v('p', 1, null), v('random', 0, null)], 'p', 1), null);
  assert.equal(normalisedScore([v('p', 1, null), v('oracle', 2, null)], 'p', 2), null);
  assert.equal(normalisedScore([v('random', 0, null), v('oracle', 2, null)], 'missing', null), null);
  const same = normalisedScore([v('p', 1, 1), v('random', 0.5, 0.5), v('oracle', 0.5, 0.5)], 'p', null)!;
  assert.equal(same.value, null);
  assert.match(normalisedScoreLine(same, 'p'), /= n\/a \(oracle and random are worth the same/);
  assert.equal(normalisedScore([v('p', NaN, null), v('random', 0, null), v('oracle', 1, null)], 'p', null)!.value, null);
  assert.equal(
    normalisedScoreLine({ value: 0.5, basis: 'sampled', policy: 0, random: -1, oracle: 1 }, 'trained'),
    'normalised score, sampled returns: (trained − random) / (oracle − random) = (0.0000 − -1.0000) / (1.0000 − -1.0000) = 0.5000',
  );
});

test('on blackjack every policy is scored on exact returns, the greedy table included, and the table shows the column', async () => {
  const options = blackjackSpec.options.parse({});
  const report = await evaluatePolicies({
    spec: blackjackSpec,
    options,
    policies: [textPolicy('text-stick-17', (hand) => (hand.playerSum >= 17 ? 'stick' : 'hit')), randomPolicy(), oraclePolicy(), stickAtPolicy(17)],
    seeds: Array.from({ length: 200 }, (_, i) => i),
    episode: resolveEpisodeSettings({ temperature: 0, maxTokens: 16 }),
  });
  const exact = (rule: ReturnType<typeof randomPolicy>) => blackjackSpec.exact!.policyReturn!(options, rule.distribution!.bind(rule));
  const expected = (exact(stickAtPolicy(17)) - exact(randomPolicy())) / (exact(oraclePolicy()) - exact(randomPolicy()));
  const [text, random, oracle, stick] = report.policies;
  assert.equal(text.exactSource, 'greedy-table');
  for (const p of [text, stick]) {
    assert.equal(p.normalisedScore!.basis, 'exact');
    assert.ok(Math.abs(p.normalisedScore!.value! - expected) < 1e-9, `${p.policy}: ${p.normalisedScore!.value} vs ${expected}`);
  }
  assert.ok(expected > 0.5 && expected < 1, `stick-at-17 ${expected}`);
  assert.equal(random.normalisedScore!.value, 0);
  assert.equal(oracle.normalisedScore!.value, 1);
  const rows = formatEvalReport(report);
  assert.match(rows.find((line) => line.startsWith('policy '))!, /exact return +normalised$/);
  assert.match(rows.find((line) => line.startsWith('stick-at-17 '))!, new RegExp(` ${expected.toFixed(3)} \\(exact\\)$`));

  // Sampled above temperature 0, the text policy has no exact value: its score falls back to sampled means.
  const hot = await evaluatePolicies({ spec: blackjackSpec, options, policies: [textPolicy('t', (h) => (h.playerSum >= 17 ? 'stick' : 'hit')), randomPolicy(), oraclePolicy()], seeds: [1, 2, 3, 4, 5, 6, 7, 8], episode: resolveEpisodeSettings({ temperature: 0.5, maxTokens: 16 }) });
  const t = hot.policies[0].normalisedScore!;
  assert.equal(t.basis, 'sampled');
  assert.deepEqual([t.policy, t.random, t.oracle], hot.policies.map((p) => p.meanReturn));
});

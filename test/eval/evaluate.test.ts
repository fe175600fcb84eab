/** evaluatePolicies: the same seeds for every policy, exact values, the oracle, head-to-head rates, greedy-table agreement. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveEpisodeSettings } from '../../src/agent/episode-settings.ts';
import { BlackjackEnv } from '../../src/envs/blackjack/env.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { nimSpec } from '../../src/envs/nim/spec.ts';
import { formatEvalReport } from '../../src/cli/eval-report.ts';
import { evaluatePolicies } from '../../src/eval/evaluate.ts';
import { headToHead } from '../../src/eval/head-to-head.ts';
import { oraclePolicy, randomPolicy, stickAtPolicy } from '../../src/policy/scripted.ts';
import type { Trajectory } from '../../src/core/trajectory.ts';
import { textPolicy } from './text-policies.ts';

const options = blackjackSpec.options.parse({});
const seeds = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);

test('head-to-head: per seed the higher return wins, ties count half, failed seeds are left out', () => {
  const h = headToHead([1, 0, -1, 1, NaN], [0, 0, 1, 1, 1]);
  assert.deepEqual(h, { rate: (1 + 0.5 + 0 + 0.5) / 4, wins: 1, ties: 2, losses: 1, seeds: 4 });
  assert.equal(headToHead([NaN], [1]).rate, null);
  assert.throws(() => headToHead([1], [1, 2]), /same seeds/);
});

test('scripted policies on blackjack: exact values, the oracle, and symmetric head-to-head rates', async () => {
  const played: Trajectory[] = [];
  const report = await evaluatePolicies({
    spec: blackjackSpec,
    options,
    policies: [oraclePolicy(), randomPolicy(), stickAtPolicy(17)],
    seeds: seeds(3000, 11),
    episode: resolveEpisodeSettings({ temperature: 0 }),
    onTrajectory: (t) => {
      played.push(t);
    },
  });
  assert.equal(played.length, 9000);
  // Every policy played exactly the same seeds.
  const seedsOf = (name: string) => played.filter((t) => t.policy === name).map((t) => t.seed).sort((a, b) => a - b);
  assert.deepEqual(seedsOf('random'), seedsOf('oracle'));
  assert.deepEqual(seedsOf('stick-at-17'), seedsOf('oracle'));

  assert.ok(Math.abs(report.optimalReturn! + 0.0466) < 5e-4);
  const [oracle, random, stick17] = report.policies;
  assert.equal(oracle.exactReturn, report.optimalReturn);
  assert.ok(Math.abs(random.exactReturn! + 0.396) < 1e-3, `random ${random.exactReturn}`);
  assert.ok(Math.abs(stick17.exactReturn! + 0.079) < 1e-3, `stick-at-17 ${stick17.exactReturn}`);
  for (const p of report.policies) {
    assert.equal(p.exactSource, 'distribution');
    assert.equal(p.greedyTable, null);
    assert.equal(p.episodes, 3000);
    assert.equal(p.invalidRate, 0);
    assert.ok(Math.abs(p.winRate + p.drawRate + p.lossRate - 1) < 1e-9);
    const half = (p.ci95[1] - p.ci95[0]) / 2;
    // ~4 sigma: a fixed seed set, but the check must not depend on a lucky draw.
    assert.ok(Math.abs(p.meanReturn - p.exactReturn!) < 2 * half, `${p.policy}: ${p.meanReturn} vs ${p.exactReturn}`);
  }
  assert.ok(report.headToHead.oracle.random! > 0.5, `oracle vs random ${report.headToHead.oracle.random}`);
  const names = report.policies.map((p) => p.policy);
  for (const a of names) {
    for (const b of names) {
      if (a === b) continue;
      assert.ok(Math.abs(report.headToHead[a][b]! + report.headToHead[b][a]! - 1) < 1e-12, `${a} vs ${b}`);
      assert.equal(report.headToHeadCounts[a][b].seeds, 3000);
    }
  }
  // The rate is computed from the returns on each seed.
  const returnsOf = (name: string) => played.filter((t) => t.policy === name).sort((x, y) => x.seed - y.seed).map((t) => t.reward);
  assert.equal(report.headToHead.oracle['stick-at-17'], headToHead(returnsOf('oracle'), returnsOf('stick-at-17')).rate);
  const text = formatEvalReport(report);
  assert.ok(text.some((line) => /^oracle +- +0\.\d{3} +0\.\d{3}$/.test(line)), text.join('\n'));
});

test('an LLM-like policy on blackjack is valued by its greedy table, which its greedy episodes agree with', async () => {
  const policy = textPolicy('text-stick-16', (hand) => (hand.playerSum >= 16 ? 'stick' : 'hit'));
  // (Seeds 0..1999 happen to deal 2.1 sigma above stick-at-16's exact value; these 2,000 are a typical draw.)
  const report = await evaluatePolicies({
    spec: blackjackSpec,
    options,
    policies: [policy, stickAtPolicy(16)],
    seeds: seeds(2000, 5000),
    episode: resolveEpisodeSettings({ temperature: 0, maxTokens: 16 }),
  });
  const [p, scripted] = report.policies;
  assert.equal(p.exactSource, 'greedy-table');
  assert.equal(p.exactReturn, p.greedyTable!.exactReturn);
  assert.ok(Math.abs(p.exactReturn! - scripted.exactReturn!) < 1e-12);
  assert.equal(p.greedyTable!.invalidRate, 0);
  // It plays exactly as the scripted rule on every seed.
  assert.equal(p.meanReturn, scripted.meanReturn);
  assert.deepEqual(report.headToHeadCounts['text-stick-16']['stick-at-16'], { rate: 0.5, wins: 0, ties: 2000, losses: 0, seeds: 2000 });
  const inside = p.exactReturn! >= p.ci95[0] && p.exactReturn! <= p.ci95[1];
  assert.equal(p.greedyTable!.agreement.checked, true);
  assert.equal(p.greedyTable!.agreement.agrees, inside);
  assert.equal(p.greedyTable!.agreement.agrees, true, p.greedyTable!.agreement.message);
});

test("each policy's caches are cleared once it has played (its greedy table included), before the next one starts", async () => {
  const log: string[] = [];
  const note = (entry: string) => {
    if (log.at(-1) !== entry) log.push(entry);
  };
  const cached = (name: string) => {
    const policy = textPolicy(name, (hand) => {
      note(`${name} plays`);
      return hand.playerSum >= 17 ? 'stick' : 'hit';
    });
    return Object.assign(policy, { clearCaches: () => log.push(`${name} cleared`) });
  };
  const [a, b] = [cached('a'), cached('b')];
  await evaluatePolicies({
    spec: blackjackSpec,
    options,
    policies: [a, b],
    seeds: seeds(20),
    episode: resolveEpisodeSettings({ temperature: 0, maxTokens: 16 }),
  });
  // Every request of a (its 20 episodes and the 280 states of its greedy table) came before its clear.
  assert.deepEqual(log, ['a plays', 'a cleared', 'b plays', 'b cleared']);
  assert.ok(a.requests.length >= 20 + 280, `a answered ${a.requests.length} requests`);
});

test('a policy failing on some seeds: the report counts the failed episodes and says its figures are over the rest', async () => {
  // Fails on every deal whose first hand sums to 12 or less (counted below from the env's deals).
  const flaky = textPolicy('flaky', (hand) => {
    if (hand.playerSum <= 12) throw new RangeError('Allocation exceeds the 4 GiB memory32 limit');
    return 'stick';
  });
  const report = await evaluatePolicies({
    spec: blackjackSpec,
    options,
    policies: [flaky, stickAtPolicy(12)],
    seeds: seeds(40),
    episode: resolveEpisodeSettings({ temperature: 0, maxTokens: 16 }),
  });
  const [p] = report.policies;
  const env = new BlackjackEnv(options);
  const low = seeds(40).filter((seed) => Number(/\(sum (\d+)/.exec(env.reset(seed).observation)![1]) <= 12).length;
  assert.equal(p.failed, low);
  assert.ok(low > 0 && low < 40);
  const lines = formatEvalReport(report);
  assert.ok(
    lines.includes(`    ${low} of 40 episodes failed (policy 'flaky' failed: Allocation exceeds the 4 GiB memory32 limit x${low}); its figures are over the other ${40 - low}`),
    lines.join('\n'),
  );
});

test('greedy play that depends on the conversation, not the state, is reported as disagreeing with the table', async () => {
  // Sticks at 12+ on the first decision, but answers junk once earlier turns are in the context.
  const policy = textPolicy('text-forgetful', (hand, request) => (request.messages.length > 2 ? 'no idea' : hand.playerSum >= 12 ? 'stick' : 'hit'));
  const report = await evaluatePolicies({ spec: blackjackSpec, options, policies: [policy], seeds: seeds(2000), episode: resolveEpisodeSettings({ temperature: 0, maxTokens: 16 }) });
  const [p] = report.policies;
  // Only the hard-21 states, which the table asks in the conversation that reaches them, see earlier turns.
  assert.equal(p.greedyTable!.invalidStates, 10);
  assert.ok(p.invalidRate > 0.05, `sampled invalid rate ${p.invalidRate}`);
  assert.equal(p.greedyTable!.agreement.agrees, false);
  assert.match(p.greedyTable!.agreement.message, /outside the sampled greedy mean return/);
  const text = formatEvalReport(report).join('\n');
  assert.match(text, /text-forgetful +-?\d\.\d{4} .* -?\d\.\d{4} \(greedy table\)/);
  assert.match(text, /greedy table: exact return -?\d\.\d{4}, 10 of 280 states answered invalidly/);
  assert.match(text, /lies outside the sampled greedy mean return/);

  // Sampled above temperature 0, nothing is compared.
  const hot = await evaluatePolicies({ spec: blackjackSpec, options, policies: [policy], seeds: seeds(50), episode: resolveEpisodeSettings({ temperature: 0.7, maxTokens: 16 }) });
  assert.equal(hot.policies[0].greedyTable!.agreement.checked, false);
  assert.equal(hot.policies[0].exactReturn, null, 'the greedy table is not the value of a sampled policy');
  assert.match(hot.policies[0].notes.join(' '), /sampled at temperature 0.7; the greedy table \(temperature 0\) is worth/);
  assert.equal(hot.temperature, 0.7);
});

test('an env without exact values reports null for them, and duplicate policy names are refused', async () => {
  const nimOptions = nimSpec.options.parse({});
  const report = await evaluatePolicies({ spec: nimSpec, options: nimOptions, policies: [randomPolicy(), oraclePolicy()], seeds: seeds(100), episode: resolveEpisodeSettings({ temperature: 0 }) });
  assert.equal(report.policies[0].greedyTable, null);
  assert.ok(report.headToHead.oracle.random! >= 0.5);
  await assert.rejects(
    evaluatePolicies({ spec: nimSpec, options: nimOptions, policies: [randomPolicy(), randomPolicy()], seeds: seeds(3), episode: resolveEpisodeSettings({}) }),
    /given twice/,
  );
});

/** Nim's `starts: 'winning'`: the options' checks, the seeded draw, and exact values over the same distribution. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveEpisodeSettings } from '../../src/agent/episode-settings.ts';
import type { DecisionRule } from '../../src/envs/env.ts';
import { resolveEnvOptions } from '../../src/envs/options.ts';
import { NimEnv } from '../../src/envs/nim/env.ts';
import { nimOptionsSchema, type NimOptions } from '../../src/envs/nim/options.ts';
import { nimOptimalReturn, nimPolicyReturn } from '../../src/envs/nim/solver.ts';
import { nimSpec } from '../../src/envs/nim/spec.ts';
import { orderedStarts, unorderedStarts, winningShare } from '../../src/envs/nim/starts.ts';
import { evaluatePolicies } from '../../src/eval/evaluate.ts';
import { oraclePolicy, randomPolicy } from '../../src/policy/scripted.ts';

const options = (raw: Record<string, unknown>): NimOptions => nimOptionsSchema.parse(raw);
const xor = (heaps: readonly number[]): number => heaps.reduce((a, b) => a ^ b, 0);
const oracleRule: DecisionRule = (view) => [{ action: view.oracle!().action, p: 1 }];
const seeds = (n: number) => Array.from({ length: n }, (_, i) => i);

test('starts=winning refuses options with no winning start, naming starts', () => {
  const refused: [Record<string, unknown>, RegExp][] = [
    [{ heaps: [3, 4, 5], first: 'opponent' }, /heaps \[3, 4, 5\] \(nim-sum 2\) are lost for the agent with the opponent moving first/],
    [{ heaps: [1, 2, 3] }, /heaps \[1, 2, 3\] \(nim-sum 0\) are lost for the agent with the agent moving first/],
    // Fixed heaps are lost for one of the two movers whatever their nim-sum.
    [{ heaps: [3, 4, 5], first: 'random' }, /lost for the agent with the opponent moving first/],
    [{ heaps: 'random', heapCount: 3, maxHeap: 2, first: 'opponent' }, /no start of 3 heaps of 1\.\.2 is won by the agent with the opponent moving first \(it needs a nim-sum of 0\)/],
    [{ heaps: 'random', heapCount: 2, maxHeap: 1, first: 'random' }, /no start of 2 heaps of 1\.\.1 is won by the agent with the agent moving first/],
  ];
  for (const [raw, message] of refused) {
    assert.throws(() => resolveEnvOptions(nimSpec, { ...raw, starts: 'winning' }), (e: Error) => /env-opt\.starts: starts=winning: /.test(e.message) && message.test(e.message), JSON.stringify(raw));
    // The same options with every start allowed are fine.
    assert.equal(nimOptionsSchema.safeParse(raw).success, true, JSON.stringify(raw));
  }
  assert.throws(() => resolveEnvOptions(nimSpec, { starts: 'won' }), /env-opt\.starts: .*"all"\|"winning"/);
  assert.equal(options({ heaps: [1, 2, 3], first: 'opponent', starts: 'winning' }).starts, 'winning');
  assert.equal(options({ heaps: 'random', heapCount: 2, maxHeap: 1, first: 'opponent', starts: 'winning' }).starts, 'winning');
});

test('the winning share and the exact start distributions agree with enumeration', () => {
  for (const [heapCount, maxHeap] of [[2, 3], [3, 4], [4, 5]]) {
    for (const first of ['agent', 'opponent'] as const) {
      const agentFirst = first === 'agent';
      const all = orderedStarts(options({ heaps: 'random', heapCount, maxHeap }), agentFirst);
      const winning = all.filter((s) => (xor(s.heaps) !== 0) === agentFirst);
      assert.ok(Math.abs(winningShare(heapCount, maxHeap, agentFirst) - winning.length / all.length) < 1e-12);
      const o = options({ heaps: 'random', heapCount, maxHeap, first, starts: 'winning' });
      const ordered = orderedStarts(o, agentFirst);
      assert.deepEqual(ordered.map((s) => s.heaps), winning.map((s) => s.heaps));
      for (const s of ordered) assert.ok(Math.abs(s.p - 1 / winning.length) < 1e-12);
      const unordered = unorderedStarts(o, agentFirst);
      assert.ok(Math.abs(unordered.reduce((a, s) => a + s.p, 0) - 1) < 1e-12);
      assert.ok(unordered.every((s) => (xor(s.heaps) !== 0) === agentFirst));
    }
  }
});

test('the env draws every winning start uniformly for the mover drawn, and only those', () => {
  const env = new NimEnv(options({ heaps: 'random', heapCount: 2, maxHeap: 3, first: 'random', starts: 'winning' }));
  const counts = { agent: new Map<string, number>(), opponent: new Map<string, number>() };
  const n = 3000;
  for (let seed = 0; seed < n; seed++) {
    const info = env.reset(seed).info as { startHeaps: number[]; first: 'agent' | 'opponent' };
    assert.equal(xor(info.startHeaps) !== 0, info.first === 'agent', `seed ${seed}: [${info.startHeaps}] with ${info.first} first`);
    const key = info.startHeaps.join(',');
    counts[info.first].set(key, (counts[info.first].get(key) ?? 0) + 1);
  }
  const agentFirst = [...counts.agent.values()].reduce((a, b) => a + b, 0);
  // The first mover keeps its even odds (sd of the share ~0.009).
  assert.ok(Math.abs(agentFirst / n - 0.5) < 0.04, `agent first ${agentFirst} of ${n}`);
  // 6 ordered pairs with a nonzero nim-sum, 3 equal pairs; each about equally often.
  assert.equal(counts.agent.size, 6);
  assert.deepEqual([...counts.opponent.keys()].sort(), ['1,1', '2,2', '3,3']);
  for (const [who, map] of Object.entries(counts)) {
    const total = [...map.values()].reduce((a, b) => a + b, 0);
    for (const [key, c] of map) assert.ok(Math.abs(c / total - 1 / map.size) < 0.05, `${who} [${key}]: ${c} of ${total}`);
  }
  // A seed still fixes the start.
  assert.deepEqual(env.reset(17).info, env.reset(17).info);
});

test('against the perfect opponent the optimum from winning starts is 1, and the oracle wins every sampled episode', async () => {
  for (const raw of [
    { heaps: [3, 4, 5] },
    { heaps: [1, 2, 3], first: 'opponent' },
    { heaps: 'random', first: 'random' },
    { heaps: 'random', heapCount: 4, maxHeap: 3, first: 'opponent' },
  ]) {
    const o = options({ ...raw, opponent: 'optimal', starts: 'winning' });
    // Exact up to the rounding of the renormalised probabilities.
    assert.ok(Math.abs(nimOptimalReturn(o) - 1) < 1e-12, JSON.stringify(raw));
    assert.ok(Math.abs(nimPolicyReturn(o, oracleRule) - 1) < 1e-12, JSON.stringify(raw));
  }
  const o = options({ heaps: 'random', heapCount: 3, maxHeap: 5, opponent: 'optimal', first: 'random', starts: 'winning' });
  const report = await evaluatePolicies({ spec: nimSpec, options: o, policies: [oraclePolicy(), randomPolicy()], seeds: seeds(1000), episode: resolveEpisodeSettings({ temperature: 0 }) });
  const [oracle, random] = report.policies;
  assert.ok(Math.abs(report.optimalReturn! - 1) < 1e-12 && Math.abs(oracle.exactReturn! - 1) < 1e-12);
  assert.deepEqual([oracle.episodes, oracle.winRate, oracle.meanReturn], [1000, 1, 1]);
  assert.ok(random.exactReturn! < 0, `random ${random.exactReturn}`);
});

test("the solver's value of random matches its sampled mean from winning starts against a random opponent", async () => {
  const o = options({ heaps: 'random', heapCount: 3, maxHeap: 5, opponent: 'random', first: 'random', starts: 'winning' });
  const report = await evaluatePolicies({ spec: nimSpec, options: o, policies: [oraclePolicy(), randomPolicy()], seeds: seeds(3000), episode: resolveEpisodeSettings({ temperature: 0 }) });
  for (const p of report.policies) {
    assert.equal(p.exactSource, 'distribution');
    // The oracle always wins (an interval of width 0): allow the exact value's rounding.
    assert.ok(p.exactReturn! >= p.ci95[0] - 1e-9 && p.exactReturn! <= p.ci95[1] + 1e-9, `${p.policy}: exact ${p.exactReturn} outside [${p.ci95}]`);
  }
  const [oracle, random] = report.policies;
  assert.ok(Math.abs(oracle.exactReturn! - report.optimalReturn!) < 1e-12);
  // From winning starts the random opponent cannot beat the oracle, which it still might with all starts.
  assert.ok(Math.abs(report.optimalReturn! - 1) < 1e-12);
  assert.ok(random.exactReturn! < 1 && random.exactReturn! > -1);
  // Winning starts are worth more to random play than all starts.
  const all = nimPolicyReturn(options({ ...o, starts: 'all' }), (view) => view.legalActions().map((action, _, a) => ({ action, p: 1 / a.length })));
  assert.ok(random.exactReturn! > all, `winning ${random.exactReturn} vs all ${all}`);
});

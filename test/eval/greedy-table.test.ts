/** The greedy table of an LLM-like policy on Blackjack: its states, its prompts, and its exact value. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runEpisode } from '../../src/agent/episode.ts';
import { resolveEpisodeSettings } from '../../src/agent/episode-settings.ts';
import { BlackjackEnv } from '../../src/envs/blackjack/env.ts';
import { allBlackjackDecisions, blackjackStateKey, evaluateBlackjackRule, ruleFromMoveTable, solveBlackjack } from '../../src/envs/blackjack/solver.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { stickAtPolicy } from '../../src/policy/scripted.ts';
import { blackjackGreedyTable } from '../../src/train/greedy-table.ts';
import { blackjackStateKeys, blackjackTableStates } from '../../src/train/greedy-table-states.ts';
import { moveTableValue, type TableMove } from '../../src/train/greedy-table-value.ts';
import { textPolicy } from './text-policies.ts';

const RULES = [
  { natural: false, sab: false },
  { natural: true, sab: false },
  { natural: false, sab: true },
];

function tableOf(move: (key: string, sum: number, soft: boolean, dealer: number) => TableMove): Record<string, TableMove> {
  return Object.fromEntries(
    blackjackStateKeys().map((key) => {
      const [sum, dealer, kind] = key.split('/');
      return [key, move(key, Number(sum), kind === 'soft', Number(dealer))];
    }),
  );
}

test('a move table without invalid answers is worth what the solver says, under every rule variant', () => {
  for (const rules of RULES) {
    const solution = solveBlackjack(rules);
    const optimal = Object.fromEntries(allBlackjackDecisions().filter((d) => !d.natural).map((d) => [blackjackStateKey(d), solution.optimalMove(d)]));
    assert.ok(Math.abs(moveTableValue(rules, optimal, -1).expectedReturn - solution.optimal.expectedReturn) < 1e-12);
    const stick17 = tableOf((_k, sum) => (sum >= 17 ? 'stick' : 'hit'));
    const v = moveTableValue(rules, stick17, -1);
    const expected = evaluateBlackjackRule(rules, ruleFromMoveTable(stick17 as Record<string, 'stick' | 'hit'>));
    assert.ok(Math.abs(v.expectedReturn - expected.expectedReturn) < 1e-12);
    assert.ok(Math.abs(v.win - expected.win) < 1e-12 && Math.abs(v.loss - expected.loss) < 1e-12);
    assert.equal(v.invalid, 0);
  }
});

test('an invalid answer ends the episode with the penalty: invalid on hard 21 is worth exactly what hitting (a sure bust) is', () => {
  const rules = RULES[0];
  const hitOn21 = tableOf((_k, sum, soft) => (sum >= 17 && !(sum === 21 && !soft) ? 'stick' : 'hit'));
  const invalidOn21 = tableOf((_k, sum, soft) => (sum === 21 && !soft ? 'invalid' : sum >= 17 ? 'stick' : 'hit'));
  const reference = evaluateBlackjackRule(rules, ruleFromMoveTable(hitOn21 as Record<string, 'stick' | 'hit'>));
  const v = moveTableValue(rules, invalidOn21, -1);
  assert.ok(Math.abs(v.expectedReturn - reference.expectedReturn) < 1e-12);
  // Hard 21 is reached only by hitting from a hard total, with a probability well inside (0, 1).
  assert.ok(v.invalid > 0.01 && v.invalid < 0.2, `P(invalid ending) = ${v.invalid}`);
  const allInvalid = moveTableValue(rules, tableOf(() => 'invalid'), -1);
  assert.ok(Math.abs(allInvalid.expectedReturn + 1) < 1e-12 && Math.abs(allInvalid.invalid - 1) < 1e-12);
  assert.throws(() => moveTableValue(rules, {}, -1), /no entry for/);
});

test('every state has a real decision: the first decision of its seed, or for hard 21 the decision after the hits that reach it', () => {
  const states = blackjackTableStates(RULES[0]);
  assert.equal(states.length, 280);
  assert.deepEqual(
    states.map((s) => s.key),
    blackjackStateKeys(),
  );
  for (const s of states) {
    assert.equal(blackjackStateKey(s.env.state()), s.key);
    const fresh = new BlackjackEnv(RULES[0]);
    const reset = fresh.reset(s.seed);
    if (s.hits === 0) {
      assert.equal(s.observation, reset.observation);
    } else {
      assert.match(s.key, /^21\/\d+\/hard$/);
      const seen = [reset.observation];
      for (let i = 0; i < s.hits; i++) seen.push(fresh.step({ name: 'hit', arguments: {} }).observation);
      assert.deepEqual(s.observations, seen);
      assert.equal(s.observation, seen[seen.length - 1]);
    }
  }
  assert.equal(states.filter((s) => s.hits > 0).length, 10);
  // Hard 21 the way play reaches it most often: a hard 11 dealt, one hit, a ten drawn.
  for (const s of states.filter((x) => x.hits > 0)) {
    assert.equal(s.hits, 1, s.key);
    assert.match(s.observations[0], /\(sum 11, no usable ace\)/, s.key);
    assert.match(s.observations[1], /^You drew 10\./, s.key);
  }
});

test('the table asks each dealt state exactly as an episode asks its first decision, and scores a text policy exactly', async () => {
  const options = RULES[0];
  const stick17 = textPolicy('text-stick-17', (hand) => (hand.playerSum >= 17 ? 'stick' : 'hit'));
  const table = await blackjackGreedyTable(stick17, options, { maxTokens: 32 });
  const exact = blackjackSpec.exact!.policyReturn!(options, stickAtPolicy(17).distribution!);
  assert.ok(Math.abs(table.exactReturn - exact) < 1e-12, `${table.exactReturn} vs ${exact}`);
  assert.equal(table.invalidRate, 0);
  assert.equal(table.states, 280);
  assert.equal(stick17.requests.length, 280);
  assert.ok(stick17.requests.every((r) => r.temperature === 0 && r.maxTokens === 32 && r.view === undefined));

  // The prompt of a dealt state is the one the agent loop sends at that seed's first decision.
  const state = blackjackTableStates(options).find((s) => s.key === '16/10/hard')!;
  const asked = stick17.requests.find((r) => r.messages[1].content === state.observation)!;
  const episode = await runEpisode({
    ...resolveEpisodeSettings({ maxTokens: 32 }),
    env: new BlackjackEnv(options),
    envName: 'blackjack',
    instructions: blackjackSpec.instructions(options),
    policy: textPolicy('probe', () => 'stick'),
    seed: state.seed,
  });
  assert.deepEqual(asked.messages, episode.turns[0].calls[0].messages);
  assert.deepEqual(asked.tools, episode.turns[0].calls[0].tools);
});

test('hard 21 is asked in the conversation that reaches it, exactly as the agent loop writes it', async () => {
  const options = RULES[0];
  const policy = textPolicy('text-stick-21', (hand) => (hand.playerSum === 21 && !hand.usableAce ? 'stick' : 'hit'));
  await blackjackGreedyTable(policy, options, { maxTokens: 32 });
  const state = blackjackTableStates(options).find((s) => s.key === '21/7/hard')!;
  assert.ok(state.hits >= 1);
  const asked = policy.requests.find((r) => r.messages.at(-1)!.content === state.observation)!;
  assert.equal(asked.messages.length, 2 + 2 * state.hits);
  // An episode on the same deal that hits until hard 21 asks its last decision with the same messages.
  const episode = await runEpisode({
    ...resolveEpisodeSettings({ maxTokens: 32 }),
    env: new BlackjackEnv(options),
    envName: 'blackjack',
    instructions: blackjackSpec.instructions(options),
    policy: textPolicy('probe', (hand) => (hand.playerSum === 21 && !hand.usableAce ? 'stick' : 'hit')),
    seed: state.seed,
  });
  const last = episode.turns.at(-1)!;
  assert.equal(last.index, state.hits);
  assert.deepEqual(asked.messages, last.calls[0].messages);
});

test('answers that are not a legal move count as invalid and take the invalid-action outcome', async () => {
  const options = RULES[0];
  // Junk on soft hands, an unknown tool with dealer ace, a legal move elsewhere.
  const policy = textPolicy('text-mixed', (hand) => (hand.usableAce ? 'I think I will hit' : hand.dealerCard === 1 ? '<tool_call>{"name": "double", "arguments": {}}</tool_call>' : hand.playerSum >= 17 ? 'stick' : 'hit'));
  const table = await blackjackGreedyTable(policy, options, { maxTokens: 16 });
  const expectedMoves = tableOf((_k, sum, soft, dealer) => (soft || dealer === 1 ? 'invalid' : sum >= 17 ? 'stick' : 'hit'));
  assert.deepEqual(table.moves, expectedMoves);
  assert.equal(table.invalidStates, 100 + 18);
  assert.ok(Math.abs(table.invalidRate - 118 / 280) < 1e-12);
  const expected = moveTableValue(options, expectedMoves, -1);
  assert.equal(table.exactReturn, expected.expectedReturn);
  assert.equal(table.invalidEndingRate, expected.invalid);
  const reasons = new Set(table.entries.filter((e) => e.move === 'invalid').map((e) => e.invalidReason!.split(':')[0]));
  assert.deepEqual([...reasons].sort(), ['no_tool_call', 'unknown_tool']);
});

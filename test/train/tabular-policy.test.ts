/** The tabular softmax policy: what it samples and records, its exact distribution, and the batch read back from rollouts. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { computeAdvantages } from '../../src/advantage/compute.ts';
import { scoredGroupsFromTrajectories } from '../../src/advantage/from-trajectories.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { blackjackDecisionView, blackjackStateKey } from '../../src/envs/blackjack/solver.ts';
import { randomPolicy } from '../../src/policy/scripted.ts';
import { runRollouts } from '../../src/rollout/rollouts.ts';
import { logSoftmax, TabularPolicy } from '../../src/train/tabular.ts';
import { tabularDecisions } from '../../src/train/tabular-batch.ts';
import { blackjackSpace } from '../../src/train/tabular-space.ts';

const RULES = { natural: false, sab: false };
const space = blackjackSpace();
const options = blackjackSpec.options.parse({});

test('blackjack space: 280 states (hard 4..21, soft 12..21, dealer 1..10) × stick, hit', () => {
  assert.equal(space.stateKeys.length, 280);
  assert.deepEqual(
    space.actions.map((a) => a.name),
    ['stick', 'hit'],
  );
  const view = blackjackDecisionView({ playerSum: 16, usableAce: false, dealerCard: 10, natural: false }, RULES);
  assert.equal(space.keyOf(view), '16/10/hard');
});

/** A table whose row for state `key` is [stick, hit] = `row`, zeros elsewhere. */
function policyWith(key: string, row: [number, number]): TabularPolicy {
  const logits = new Float32Array(280 * 2);
  const i = space.stateKeys.indexOf(key);
  logits.set(row, 2 * i);
  return new TabularPolicy(space, { logits });
}

test('tabular policy: softmax distribution, greedy move, and samples recorded as [state] → [action] with their logprob', async () => {
  const key = blackjackStateKey({ playerSum: 13, dealerCard: 2, usableAce: false });
  const policy = policyWith(key, [Math.log(3), 0]); // π(stick) = 3/4
  const view = blackjackDecisionView({ playerSum: 13, usableAce: false, dealerCard: 2, natural: false }, RULES);
  const dist = policy.distribution(view);
  assert.deepEqual(
    dist.map((d) => d.action.name),
    ['stick', 'hit'],
  );
  assert.ok(Math.abs(dist[0].p - 0.75) < 1e-6 && Math.abs(dist[1].p - 0.25) < 1e-6);
  assert.equal(policy.greedyDistribution(view)[0].action.name, 'stick');

  const row = space.stateKeys.indexOf(key);
  const completions = await policy.complete({ messages: [], tools: [], maxTokens: 8, temperature: 1, seed: 7, n: 4000, view });
  let sticks = 0;
  for (const c of completions) {
    const a = c.completionTokenIds![0];
    assert.deepEqual(c.promptTokenIds, [row]);
    assert.equal(c.text, `<tool_call>{"name":"${a === 0 ? 'stick' : 'hit'}","arguments":{}}</tool_call>`);
    assert.ok(Math.abs(c.logprobs![0] - Math.log(a === 0 ? 0.75 : 0.25)) < 1e-6);
    assert.equal(c.tokenIdsExact, true);
    if (a === 0) sticks++;
  }
  // Binomial(4000, 0.75): sd 27, so ±120 is > 4 sd.
  assert.ok(Math.abs(sticks - 3000) < 120, `sticks ${sticks} of 4000`);

  // Temperature 2 flattens: logits/2 → π(stick) = √3 / (√3 + 1); the recorded logprob is the tempered one, modelLogprobs the policy's.
  const [hot] = await policy.complete({ messages: [], tools: [], maxTokens: 8, temperature: 2, seed: 1, view });
  const tempered = logSoftmax([Math.log(3), 0], 2);
  const a = hot.completionTokenIds![0];
  assert.ok(Math.abs(hot.logprobs![0] - tempered[a]) < 1e-6);
  assert.ok(Math.abs(hot.modelLogprobs![0] - Math.log(a === 0 ? 0.75 : 0.25)) < 1e-6);
  // Temperature 0 is greedy.
  const greedy = await policy.complete({ messages: [], tools: [], maxTokens: 8, temperature: 0, seed: 1, n: 20, view });
  assert.ok(greedy.every((c) => c.completionTokenIds![0] === 0 && c.logprobs![0] === 0));
});

test('tabular policy: rejects a missing view and a table of the wrong size', async () => {
  const policy = new TabularPolicy(space);
  await assert.rejects(policy.complete({ messages: [], tools: [], maxTokens: 8, temperature: 1 }), /needs the decision view/);
  assert.throws(() => policy.setLogits(new Float32Array(3), 1), /expected 560 logits/);
  assert.throws(() => policy.setLogits(new Float32Array(560).fill(NaN), 1), /logit 0 is NaN/);
});

test('tabular batch: every decision of a real rollout, with its recorded state, action, logprob and its turn advantage', async () => {
  const key = blackjackStateKey({ playerSum: 12, dealerCard: 5, usableAce: false });
  const policy = policyWith(key, [0.3, -0.2]);
  const rollout = await runRollouts({ spec: blackjackSpec, options, policy, count: 20, groupSize: 4 });
  const { advantages } = computeAdvantages(scoredGroupsFromTrajectories(rollout.trajectories), { estimator: 'grpo' });
  const d = tabularDecisions(rollout.trajectories, advantages);
  const turns = rollout.trajectories.reduce((n, t) => n + t.turns.length, 0);
  assert.equal(d.states.length, turns);
  const byId = new Map(advantages.map((a) => [a.trajectoryId, a.turnAdvantages]));
  let i = 0;
  for (const t of rollout.trajectories) {
    t.turns.forEach((turn, k) => {
      assert.equal(space.actions[d.actions[i]].name, turn.actions[0].name);
      assert.ok(Math.abs(d.samplingLogprobs[i] - policy.logprobs(d.states[i])[d.actions[i]]) < 1e-9);
      assert.equal(d.advantages[i], byId.get(t.id)![k]);
      i++;
    });
  }
  // Trajectories of a policy that recorded no ids cannot be trained on as tabular decisions.
  const scripted = await runRollouts({ spec: blackjackSpec, options, policy: randomPolicy(), count: 2, groupSize: 2 });
  const adv = computeAdvantages(scoredGroupsFromTrajectories(scripted.trajectories), { estimator: 'grpo' });
  assert.throws(() => tabularDecisions(scripted.trajectories, adv.advantages), /no tabular state\/action\/logprob \(policy random\)/);
});

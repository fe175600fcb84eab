import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCompletion } from '../../src/agent/parse-tool-calls.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import type { BlackjackEnv } from '../../src/envs/blackjack/env.ts';
import type { DecisionView } from '../../src/envs/env.ts';
import type { Policy } from '../../src/policy/policy.ts';
import { alwaysStickPolicy, oraclePolicy, randomPolicy, stickAtPolicy, toolCallText } from '../../src/policy/scripted.ts';

const options = blackjackSpec.options.parse({});

function dealt(seed: number): BlackjackEnv {
  const env = blackjackSpec.create(options) as BlackjackEnv;
  env.reset(seed);
  return env;
}

async function act(policy: Policy, view: DecisionView, seed = 1) {
  const [c] = await policy.complete({ messages: [], tools: [], maxTokens: 8, temperature: 1, seed, view });
  return c;
}

describe('scripted policies answer like a model', () => {
  it('a real <tool_call> text that the agent parser reads back as the legal action', async () => {
    const env = dealt(3);
    for (const policy of [randomPolicy(), oraclePolicy(), stickAtPolicy(17), alwaysStickPolicy()]) {
      const c = await act(policy, env);
      assert.match(c.text, /^<tool_call>\{"name":"(hit|stick)","arguments":\{\}\}<\/tool_call>$/);
      const parsed = parseCompletion(c, env.reset(3).tools);
      assert.equal(parsed.error, null);
      assert.equal(env.validate(parsed.calls[0]), null);
      assert.deepEqual(
        { ids: c.promptTokenIds, exact: c.tokenIdsExact, version: c.policyVersion, finish: c.finishReason, model: c.modelId },
        { ids: null, exact: false, version: 0, finish: 'stop', model: policy.name },
      );
      assert.equal(policy.contextLength, null);
    }
  });

  it('n > 1 gives n completions', async () => {
    const cs = await randomPolicy().complete({ messages: [], tools: [], maxTokens: 8, temperature: 1, seed: 5, n: 4, view: dealt(1) });
    assert.equal(cs.length, 4);
  });

  it('without the decision view they refuse, naming why', async () => {
    await assert.rejects(randomPolicy().complete({ messages: [], tools: [], maxTokens: 8, temperature: 1 }), /scripted: it needs the decision view/);
  });

  it('toolCallText writes arguments as JSON', () => {
    assert.equal(toolCallText({ name: 'add', arguments: { n: 2 } }), '<tool_call>{"name":"add","arguments":{"n":2}}</tool_call>');
  });
});

describe('random', () => {
  it('is a function of the request seed, and uniform over the legal actions', async () => {
    const env = dealt(0);
    const policy = randomPolicy();
    assert.equal((await act(policy, env, 42)).text, (await act(policy, env, 42)).text);
    let hits = 0;
    const n = 4000;
    for (let seed = 0; seed < n; seed++) if ((await act(policy, env, seed)).text.includes('"hit"')) hits++;
    // Binomial(4000, 0.5): sd 31.6, so +-4 sd is 126.
    assert.ok(Math.abs(hits - n / 2) < 126, `hits ${hits}`);
    assert.deepEqual(policy.distribution!(env).map((d) => d.p), [0.5, 0.5]);
  });
});

describe('blackjack rules', () => {
  it('stick-at-N sticks exactly when the player sum reaches N', async () => {
    for (let seed = 0; seed < 200; seed++) {
      const env = dealt(seed);
      const sum = env.state().playerSum;
      for (const n of [12, 17, 20]) {
        const text = (await act(stickAtPolicy(n), env)).text;
        assert.equal(text.includes('"stick"'), sum >= n, `sum ${sum}, N ${n}`);
        assert.deepEqual(stickAtPolicy(n).distribution!(env), [{ action: { name: sum >= n ? 'stick' : 'hit', arguments: {} }, p: 1 }]);
      }
    }
  });

  it('oracle follows the env oracle', async () => {
    for (let seed = 0; seed < 50; seed++) {
      const env = dealt(seed);
      const text = (await act(oraclePolicy(), env)).text;
      assert.ok(text.includes(`"${env.oracle().action.name}"`));
    }
  });

  it("distribution() feeds the exact evaluator: DESIGN's returns for each baseline", () => {
    const exact = (p: Policy) => blackjackSpec.exact!.policyReturn!(options, (view) => p.distribution!(view));
    assert.ok(Math.abs(exact(randomPolicy()) - -0.396) < 0.001, `random ${exact(randomPolicy())}`);
    assert.ok(Math.abs(exact(stickAtPolicy(17)) - -0.079) < 0.001);
    assert.ok(Math.abs(exact(alwaysStickPolicy()) - -0.186) < 0.001);
    assert.ok(Math.abs(exact(oraclePolicy()) - -0.0466) < 0.0005);
  });

  it('stick-at-N on a state without playerSum fails with a clear message', async () => {
    const view: DecisionView = { legalActions: () => [{ name: 'take', arguments: {} }], state: () => ({ heaps: [1, 2] }) };
    await assert.rejects(act(stickAtPolicy(17), view), /plays blackjack: the state has no numeric playerSum/);
    const withSum: DecisionView = { legalActions: () => [{ name: 'take', arguments: {} }], state: () => ({ playerSum: 20 }) };
    await assert.rejects(act(alwaysStickPolicy(), withSum), /no legal 'stick' action/);
  });
});

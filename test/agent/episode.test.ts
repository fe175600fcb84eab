import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runEpisode, type EpisodeInput } from '../../src/agent/episode.ts';
import type { Completion } from '../../src/core/completion.ts';
import type { Trajectory } from '../../src/core/trajectory.ts';
import type { ActionValue } from '../../src/envs/env.ts';
import type { Policy, PolicyRequest } from '../../src/policy/policy.ts';
import { randomPolicy } from '../../src/policy/scripted.ts';
import { add, completion, CounterEnv, peek, ScriptPolicy, type CounterKnobs } from './counter-env.ts';

function play(policy: Policy, knobs: CounterKnobs = {}, extra: Partial<EpisodeInput> = {}): Promise<Trajectory> {
  return runEpisode({
    env: new CounterEnv(knobs),
    envName: 'counter',
    instructions: 'Reach the target total.',
    policy,
    seed: 0, // target 4
    maxTurns: 10,
    maxTokens: 64,
    temperature: 1,
    maxInformationalCalls: 2,
    ...extra,
  });
}

const RETRY = { mode: 'retry', penalty: -2, maxRetries: 2 } as const;

describe('runEpisode: a clean episode', () => {
  it('records turns, messages, rewards and metrics', async () => {
    const policy = new ScriptPolicy([`Three first. ${add(3)}`, add(1)]);
    const t = await play(policy);
    assert.equal(t.status, 'completed');
    assert.equal(t.statusReason, null);
    assert.equal(t.turns.length, 2);
    assert.deepEqual(t.turns.map((turn) => turn.actions[0].arguments.n), [3, 1]);
    assert.deepEqual(t.turns.map((turn) => turn.feedback), ['Total 3.', 'Total 4. Target reached.']);
    assert.equal(t.turns[1].observation, 'Total 3.');
    // The env's state as each decision was taken (what the critic estimator keys on).
    assert.deepEqual(t.turns.map((turn) => turn.state), [{ total: 0, target: 4 }, { total: 3, target: 4 }]);
    assert.equal(t.reward, 1);
    assert.deepEqual(t.rewardParts, { env: 1 });
    assert.deepEqual(t.messages.map((m) => m.role), ['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    assert.match(t.messages[0].content, /^Reach the target total\.\n\n<tools>\n\{"name":"add"/);
    assert.equal(t.messages[2].content, 'Three first.');
    assert.equal(t.messages[3].toolCallId, t.messages[2].toolCalls![0].id);
    assert.equal(t.messages[3].name, 'add');
    // Each call records exactly the prompt it was sent, not the later conversation.
    assert.deepEqual(t.turns.map((turn) => turn.calls[0].messages.length), [2, 4]);
    assert.equal(t.turns[0].calls[0].completion.text, `Three first. ${add(3)}`);
    assert.equal(policy.requests[0].view !== undefined, true);
    assert.equal(typeof policy.requests[0].seed, 'number');
    assert.notEqual(policy.requests[0].seed, policy.requests[1].seed);
    // Each call records the sampling settings it asked for, its own seed included.
    assert.deepEqual(t.turns.map((turn) => turn.calls[0].sampling), policy.requests.map((r) => ({ temperature: 1, maxTokens: 64, seed: r.seed })));
    assert.deepEqual(
      { turns: t.metrics.turns, llmCalls: t.metrics.llmCalls, invalid: t.metrics.invalidActions, win: t.metrics.win, loss: t.metrics.loss },
      { turns: 2, llmCalls: 2, invalid: 0, win: 1, loss: 0 },
    );
    assert.equal('promptTokens' in t.metrics, false, 'token counts are unknown for a text-only policy');
    assert.deepEqual(t.policyVersions, [0]);
  });

  it('counts tokens and policy versions when the completions carry them', async () => {
    const policy = new ScriptPolicy([
      completion(add(3), { promptTokenIds: [1, 2, 3], completionTokenIds: [4, 5], policyVersion: 7 }),
      completion(add(1), { promptTokenIds: [1, 2, 3, 4, 5, 6], completionTokenIds: [7], policyVersion: 8 }),
    ]);
    const t = await play(policy);
    assert.equal(t.metrics.promptTokens, 9);
    assert.equal(t.metrics.completionTokens, 3);
    assert.deepEqual(t.policyVersions, [7, 8]);
  });

  it('async env methods work the same', async () => {
    const t = await play(new ScriptPolicy([add(3), add(1)]), { asyncSteps: true });
    assert.equal(t.status, 'completed');
    assert.equal(t.reward, 1);
  });
});

describe('runEpisode: invalid actions (rule 8)', () => {
  it('end mode: an unparsable answer ends the episode with the penalty, raw text kept', async () => {
    const t = await play(new ScriptPolicy(['I would add two.']));
    assert.equal(t.status, 'completed');
    assert.match(t.statusReason!, /^invalid action \(no_tool_call\)/);
    const turn = t.turns[0];
    assert.equal(turn.invalid, true);
    assert.equal(turn.parseError?.kind, 'no_tool_call');
    assert.equal(turn.parseError?.raw, 'I would add two.');
    assert.deepEqual(turn.rewardParts, { invalid_action: -1 });
    assert.equal(t.reward, -1);
    assert.equal(t.metrics.invalidActions, 1);
    assert.equal(t.metrics.loss, 1);
    assert.deepEqual(t.messages.map((m) => m.role), ['system', 'user', 'assistant', 'user']);
    assert.match(t.messages[3].content, /^Invalid answer: .*The episode is over\.$/);
  });

  it('end mode: an action env.validate refuses is kept on the turn, answered by a tool message', async () => {
    const t = await play(new ScriptPolicy([add(3), add(3)]));
    assert.equal(t.turns.length, 2);
    const turn = t.turns[1];
    assert.equal(turn.invalid, true);
    assert.equal(turn.parseError, null);
    assert.deepEqual(turn.actions.map((a) => a.arguments), [{ n: 3 }]);
    assert.match(turn.feedback, /adding 3 overshoots/);
    assert.match(t.statusReason!, /illegal_action/);
    assert.equal(t.reward, -1);
    const last = t.messages.at(-1)!;
    assert.equal(last.role, 'tool');
    assert.equal(last.toolCallId, t.messages.at(-2)!.toolCalls![0].id);
  });

  it('more than one action in an answer is invalid', async () => {
    const t = await play(new ScriptPolicy([add(1) + add(1)]));
    assert.match(t.statusReason!, /multiple_actions/);
    assert.equal(t.turns[0].parseError, null);
    assert.deepEqual(t.turns[0].actions, []);
    assert.equal(t.messages.filter((m) => m.role === 'tool').length, 2, 'both calls are answered');
  });

  it('retry mode: the model gets the error and tries again within the same turn', async () => {
    const t = await play(new ScriptPolicy(['junk', `<tool_call>{"name": "add", "arguments": {"n": 9}}</tool_call>`, add(3), add(1)]), {
      invalidAction: RETRY,
    });
    assert.equal(t.status, 'completed');
    assert.equal(t.reward, 1);
    assert.equal(t.turns.length, 2);
    assert.equal(t.turns[0].calls.length, 3);
    assert.equal(t.turns[0].invalid, false);
    assert.equal(t.turns[0].parseError, null);
    assert.equal(t.metrics.invalidActions, 2);
    assert.equal(t.metrics.retries, 2);
    assert.equal(t.metrics.llmCalls, 4);
    const errors = t.messages.filter((m) => m.content.startsWith('Invalid answer'));
    assert.equal(errors.length, 2);
    assert.match(errors[1].content, /arguments\.n must be <= 3.*Try again\.$/);
    // The third call saw both failed attempts and their errors.
    assert.equal(t.turns[0].calls[2].messages.length, 6);
    // Each refused answer is marked on its call; the legal one and the next turn's are not.
    assert.deepEqual(t.turns.flatMap((turn) => turn.calls.map((c) => c.invalid === true)), [true, true, false, false]);
  });

  it('retry mode: an illegal action is answered on its call and retried', async () => {
    const t = await play(new ScriptPolicy([add(3), add(2), add(1)]), { invalidAction: RETRY });
    assert.equal(t.status, 'completed');
    assert.equal(t.turns[1].calls.length, 2);
    const refused = t.messages.find((m) => m.role === 'tool' && m.content.includes('overshoots'));
    assert.ok(refused?.toolCallId);
  });

  it('retry mode: after maxRetries the next invalid answer ends the episode with the penalty', async () => {
    const t = await play(new ScriptPolicy(['junk']), { invalidAction: RETRY });
    assert.equal(t.turns.length, 1);
    assert.equal(t.turns[0].calls.length, 3);
    assert.equal(t.metrics.invalidActions, 3);
    assert.equal(t.metrics.retries, 2);
    assert.equal(t.turns[0].invalid, true);
    assert.deepEqual(t.turns[0].calls.map((c) => c.invalid), [true, true, true]);
    assert.deepEqual(t.rewardParts, { invalid_action: -2 });
    assert.match(t.messages.at(-1)!.content, /The episode is over/);
  });
});

describe('runEpisode: informational tools', () => {
  it('are answered by env.inform within the turn, then the policy acts', async () => {
    const t = await play(new ScriptPolicy([peek, add(3), add(1)]));
    assert.equal(t.status, 'completed');
    assert.equal(t.turns.length, 2);
    assert.deepEqual(t.turns[0].informational.map((i) => i.result), ['The target is 4.']);
    assert.equal(t.turns[0].calls.length, 2);
    assert.equal(t.metrics.informationalCalls, 1);
    assert.deepEqual(t.messages.slice(2, 4).map((m) => [m.role, m.content]), [
      ['assistant', ''],
      ['tool', 'The target is 4.'],
    ]);
  });

  it('can share an answer with the action', async () => {
    const t = await play(new ScriptPolicy([peek + add(3), add(1)]));
    assert.equal(t.turns[0].calls.length, 1);
    assert.equal(t.turns[0].informational.length, 1);
    assert.equal(t.status, 'completed');
  });

  it('past the per-decision limit the answer is invalid', async () => {
    const t = await play(new ScriptPolicy([peek, peek + peek]), {}, { maxInformationalCalls: 2 });
    assert.equal(t.turns[0].informational.length, 1);
    assert.equal(t.turns[0].invalid, true);
    assert.match(t.statusReason!, /too_many_informational_calls/);
  });

  it('the limit is per decision', async () => {
    const t = await play(new ScriptPolicy([peek, add(3), peek, add(1)]), {}, { maxInformationalCalls: 1 });
    assert.equal(t.status, 'completed');
    assert.equal(t.metrics.informationalCalls, 2);
  });
});

describe('runEpisode: truncation', () => {
  it('by max turns', async () => {
    const t = await play(new ScriptPolicy([add(1)]), {}, { maxTurns: 2 });
    assert.equal(t.status, 'truncated');
    assert.equal(t.statusReason, 'max turns (2) reached');
    assert.equal(t.turns.length, 2);
    assert.equal(t.metrics.draw, 1, 'return 0');
  });

  it("by the env's own maxTurns", async () => {
    const env = Object.assign(new CounterEnv(), { maxTurns: 1 });
    const t = await play(new ScriptPolicy([add(1)]), {}, { env });
    assert.equal(t.statusReason, 'max turns (1) reached');
  });

  it('by the context budget, before a call that would not fit', async () => {
    const policy = new ScriptPolicy([add(1)]);
    const counting: Policy = {
      name: 'counting',
      contextLength: null,
      complete: (r) => policy.complete(r),
      countTokens: (messages) => messages.reduce((n, m) => n + m.content.length, 0),
    };
    const first = await play(counting, {}, { contextBudget: 100_000 });
    const sizes = policy.requests.map((r) => r.messages.reduce((n, m) => n + m.content.length, 0));
    assert.equal(first.status, 'completed');
    // A budget that fits the second prompt (+ maxTokens) but not the third.
    const budget = sizes[1] + 64;
    const t = await play(counting, {}, { contextBudget: budget });
    assert.equal(t.status, 'truncated');
    assert.match(t.statusReason!, new RegExp(`^context budget: the next prompt has ${sizes[2]} tokens \\+ 64 max new tokens, over the limit of ${budget}`));
    assert.equal(t.turns.length, 2, 'no empty turn is recorded');
  });

  it("by the policy's context length", async () => {
    const counting: Policy = {
      name: 'small',
      contextLength: 10,
      complete: async () => [completion(add(1))],
      countTokens: () => 5,
    };
    const t = await play(counting);
    assert.equal(t.status, 'truncated');
    assert.match(t.statusReason!, /over the limit of 10/);
    assert.equal(t.turns.length, 0);
  });
});

describe('runEpisode: finish reasons and timeouts', () => {
  it("a cut completion ('length') that does not parse is invalid, and is counted", async () => {
    const t = await play(new ScriptPolicy([completion('<tool_call>{"name": "add", "argu', { finishReason: 'length' })]));
    assert.equal(t.metrics.lengthFinishes, 1);
    assert.equal(t.turns[0].parseError?.kind, 'malformed_json');
    assert.equal(t.turns[0].calls[0].completion.finishReason, 'length');
  });

  it("a 'length' completion whose call is whole still acts", async () => {
    const t = await play(new ScriptPolicy([completion(`${add(3)} and then`, { finishReason: 'length' }), add(1)]));
    assert.equal(t.status, 'completed');
    assert.equal(t.metrics.lengthFinishes, 1);
  });

  it('a call past callTimeoutMs ends the episode as truncated, even if the policy ignores the signal', async () => {
    let signal: AbortSignal | undefined;
    const hanging: Policy = {
      name: 'hanging',
      contextLength: null,
      complete: (r) => {
        signal = r.signal;
        return new Promise(() => {});
      },
    };
    const started = performance.now();
    const t = await play(hanging, {}, { callTimeoutMs: 30 });
    assert.ok(performance.now() - started < 2000);
    assert.equal(t.status, 'truncated');
    assert.equal(t.statusReason, 'policy call timed out after 30 ms');
    assert.equal(t.metrics.timeouts, 1);
    assert.equal(t.turns[0].calls[0].completion.finishReason, 'timeout');
    assert.equal(signal?.aborted, true);
  });
});

describe('runEpisode: aborting', () => {
  it('an outer signal fails the episode, also while a call hangs', async () => {
    const controller = new AbortController();
    const hanging: Policy = { name: 'hanging', contextLength: null, complete: () => new Promise(() => {}) };
    setTimeout(() => controller.abort(), 10);
    const t = await play(hanging, {}, { signal: controller.signal, callTimeoutMs: 60_000 });
    assert.equal(t.status, 'failed');
    assert.equal(t.statusReason, 'aborted');
  });
});

describe('runEpisode: failures never escape', () => {
  const failed = async (pattern: RegExp, knobs: CounterKnobs, policy: Policy = new ScriptPolicy([add(3), add(1)]), extra: Partial<EpisodeInput> = {}) => {
    const t = await play(policy, knobs, extra);
    assert.equal(t.status, 'failed');
    assert.match(t.statusReason!, pattern);
    assert.equal('win' in t.metrics, false);
    return t;
  };
  const failsWith = async (...args: Parameters<typeof failed>): Promise<void> => {
    await failed(...args);
  };
  it('env.reset throws', () => failsWith(/^env\.reset threw: reset exploded$/, { throwIn: 'reset' }));
  it('env.step throws', () => failsWith(/^env\.step threw: step exploded$/, { throwIn: 'step' }));
  it('env.validate throws', () => failsWith(/^env\.validate threw/, { throwIn: 'validate' }));
  it('env.step returns junk', () =>
    failsWith(/^env\.step returned an invalid value: observation: .*; done: /, { junkStep: { observation: 5, reward: 0, truncated: false } }));
  it('env.step returns a non-finite reward', () =>
    failsWith(/reward: .*received NaN/, { junkStep: { observation: '', reward: NaN, done: true, truncated: false } }));
  it('env.step reward parts that do not add up', () =>
    failsWith(/rewardParts add up to 2, not to the reward 1/, { junkStep: { observation: '', reward: 1, rewardParts: { a: 1, b: 1 }, done: true, truncated: false } }));
  it('the env factory throws', () =>
    failsWith(/^creating the env failed: nope$/, {}, undefined, {
      env: () => {
        throw new Error('nope');
      },
    }));
  it('env.state() returns no object', () => {
    const env = new CounterEnv();
    Object.assign(env, { state: () => [1, 2] });
    return failsWith(/^env\.state\(\) must return an object, got an array$/, {}, undefined, { env });
  });
  it('informational tools without inform()', () => {
    const env = new CounterEnv();
    Object.assign(env, { inform: undefined });
    return failsWith(/offers informational tools \(peek\) but has no inform\(\) method/, {}, undefined, { env });
  });
  it('the policy throws', () =>
    failsWith(/^policy 'script' failed: backend down$/, {}, new ScriptPolicy([() => Promise.reject(new Error('backend down'))])));
  it("the policy reports finishReason 'error'", () =>
    failsWith(/reported an error: 503/, {}, new ScriptPolicy([completion('503', { finishReason: 'error' })])));
  it('a reward function collides with an env part', () =>
    failsWith(/collides/, { withParts: true }, undefined, { rewards: { fns: [{ name: 'reach', score: () => 1 }], weights: {} } }));
  it('keeps the turns played before the failure', async () => {
    const env = new CounterEnv();
    let steps = 0;
    const step = env.step.bind(env);
    env.step = (a) => (++steps === 2 ? Promise.reject(new Error('late')) : step(a));
    const t = await failed(/late/, {}, new ScriptPolicy([add(1)]), { env });
    assert.equal(t.turns.length, 2);
    assert.equal(t.turns[0].actions.length, 1);
  });
});

describe('runEpisode: rewards and determinism', () => {
  it('adds reward-function parts and weights the total (rule 7)', async () => {
    const t = await play(new ScriptPolicy([add(3), add(1)]), { withParts: true }, {
      rewards: { fns: [{ name: 'brevity', score: (turn) => (turn.calls[0].completion.text.length < 100 ? 1 : 0) }], weights: { brevity: 0.5 } },
    });
    assert.deepEqual(t.turns[1].rewardParts, { reach: 1, brevity: 1 });
    assert.equal(t.turns[1].reward, 1.5);
    assert.equal(t.reward, 2);
    assert.deepEqual(t.rewardParts, { reach: 1, brevity: 2 });
    assert.equal(t.metrics.win, 1, 'the outcome follows the env, not the shaped total');
  });

  it('the same seed and sample give the same episode; another sample may differ', async () => {
    const strip = (t: Trajectory) =>
      JSON.stringify(t, (key, value) => (['id', 'startedAt', 'finishedAt', 'latencyMs', 'timings', 'policyMs', 'envMs'].includes(key) ? undefined : value));
    const policy = randomPolicy();
    const runs = await Promise.all([1, 1, 2].map((sample) => play(policy, {}, { seed: 7, sample })));
    assert.equal(strip(runs[0]), strip(runs[1]));
    const seedsOf = (t: Trajectory) => t.turns.map((turn) => turn.calls[0].completion.text).join();
    assert.ok(seedsOf(runs[0]).length > 0);
    // Different samples draw different per-call seeds.
    const many = await Promise.all(Array.from({ length: 8 }, (_, sample) => play(policy, {}, { seed: 7, sample })));
    assert.ok(new Set(many.map(seedsOf)).size > 1);
  });
});

/** The counter env scoring every legal `add n` exactly (here 0.1 · n), optionally leaving one out; the loop needs only actionRewards. */
class DenseCounterEnv extends CounterEnv {
  constructor(private readonly unscored: number | null = null) {
    super();
  }
  actionRewards(): ActionValue[] {
    return this.legalActions()
      .filter((a) => a.arguments.n !== this.unscored)
      .map((action) => ({ action, expectedReward: 0.1 * (action.arguments.n as number) }));
  }
}

/** Answers a request with one completion per sample it asks for, from the texts for that call. */
class SamplesPolicy implements Policy {
  readonly name = 'samples';
  readonly contextLength = null;
  readonly requests: PolicyRequest[] = [];
  constructor(private readonly calls: string[][]) {}
  async complete(request: PolicyRequest): Promise<Completion[]> {
    const texts = this.calls[this.requests.length];
    this.requests.push(request);
    return texts.slice(0, request.n ?? 1).map((text, j) => completion(text, { promptTokenIds: [1, 2], completionTokenIds: Array.from({ length: j + 1 }, () => 5), tokenIdsExact: true }));
  }
}

describe('runEpisode: decision samples (dense envs)', () => {
  it('draws k answers per decision, plays the first and scores each exactly', async () => {
    const policy = new SamplesPolicy([
      [add(1), add(3), 'no tool call'],
      [add(3), peek, add(2)],
    ]);
    const t = await play(policy, {}, { env: new DenseCounterEnv(), decisionSamples: 3 });
    assert.deepEqual(policy.requests.map((r) => r.n), [3, 3]);
    assert.equal(t.status, 'completed');
    assert.deepEqual(t.turns.map((turn) => turn.actions[0].arguments.n), [1, 3], 'the first sample is the one played');
    const [first, second] = t.turns.map((turn) => turn.calls[0].decision!);
    assert.deepEqual(first.alternatives.map((c) => c.text), [add(3), 'no tool call']);
    assert.deepEqual(first.rewards.map((r) => (r === null ? null : Math.round(r * 10) / 10)), [0.1, 0.3, -1], 'no tool call: the invalid-action penalty');
    assert.deepEqual(first.invalid, [false, false, true]);
    // At total 1 of target 4: add 2 is legal; peek only asks (unscored).
    assert.deepEqual(second.rewards.map((r) => (r === null ? null : Math.round(r * 10) / 10)), [0.3, null, 0.2]);
    assert.deepEqual(second.invalid, [false, false, false]);
    assert.equal(t.metrics.alternativeTokens, 2 + 3 + 2 + 3, 'the alternatives generated 2 and 3 tokens at each decision');
    assert.equal(t.metrics.invalidActions, 0, 'an alternative is never played, so never an invalid action');
  });

  it('asks for one answer where the env cannot score actions, and fails an env whose table misses a legal action', async () => {
    const plain = new SamplesPolicy([[add(3)], [add(1)]]);
    const t = await play(plain, {}, { decisionSamples: 3 });
    assert.deepEqual(plain.requests.map((r) => r.n), [undefined, undefined]);
    assert.equal(t.turns[0].calls[0].decision, undefined);
    const broken = await play(new SamplesPolicy([[add(1), add(2)]]), {}, { env: new DenseCounterEnv(2), decisionSamples: 2 });
    assert.equal(broken.status, 'failed');
    assert.match(broken.statusReason ?? '', /scoring the decision's samples: sampled\.1: add\(\{"n":2\}\) is not among the env's scored actions/);
  });
});

/**
 * Explored answers (explored-answers.ts): at a dense decision, the legal actions no answer took,
 * written as the played answer would read with that action, join the decision's group with the
 * env's recorded reward; the played answer's prompt ids, numbered after the completions, drawn by
 * the Rng; a decision whose played answer took no legal action is skipped. Then the group's
 * advantages and training samples include them, marked explored.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { decisionAdvantages } from '../../src/advantage/from-decisions.ts';
import type { Completion } from '../../src/core/completion.ts';
import type { Message } from '../../src/core/messages.ts';
import { Rng } from '../../src/core/random.ts';
import type { Trajectory } from '../../src/core/trajectory.ts';
import { assistantCompletionText } from '../../src/model/assistant-completion-text.ts';
import { initEngine } from '../../src/model/engine.ts';
import { createDefaultModel, type ModelAssets } from '../../src/train/default-model.ts';
import { exploredAnswers } from '../../src/train/explored-answers.ts';
import { buildDecisionSamples } from '../../src/train/samples-decisions.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { trajectory } from './samples-fixtures.ts';
import { pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';

let assets: ModelAssets;

before(async () => {
  await initEngine({ threads: 1 });
  assets = (await createDefaultModel({ spec: pickSpec, options: {}, seed: 1, corpusEpisodes: 30, shape: parseTrainConfig(tinyTrainConfig()).model })).assets;
});

const tools = [{ name: 'pick', description: 'Pick a number.', parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }];
const messages: Message[] = [
  { role: 'system', content: 'Pick the target number.' },
  { role: 'user', content: 'Target 2.' },
];
const PROMPT = [5, 6, 7];
const answerPicking = (n: number): Message => ({ role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'pick', arguments: { n } }] });
const textPicking = (n: number) => assistantCompletionText(assets, messages, tools, answerPicking(n));

function completionPicking(n: number): Completion {
  const ids = assets.tokenizer.encode(textPicking(n));
  return { text: textPicking(n), promptTokenIds: PROMPT, completionTokenIds: ids, logprobs: ids.map(() => -0.1), tokenIdsExact: true, finishReason: 'stop', modelId: 'm', policyVersion: 3 };
}

/** One decision of the pick env (target 2: pick 2 scores 1, the others 0): the played answer picks `played`, the alternatives `others`. */
function decisionTrajectory(played: Message, others: number[]): Trajectory {
  const completions = [played.toolCalls ? completionPicking(played.toolCalls[0].arguments.n as number) : { ...completionPicking(1), text: 'hello' }, ...others.map(completionPicking)];
  const rewardOf = (n: number) => (n === 2 ? 1 : 0);
  const decision = {
    alternatives: completions.slice(1),
    rewards: [played.toolCalls ? rewardOf(played.toolCalls[0].arguments.n as number) : -1, ...others.map(rewardOf)],
    invalid: [!played.toolCalls, ...others.map(() => false)],
    actionValues: [1, 2, 3].map((n) => ({ action: { name: 'pick', arguments: { n } }, reward: rewardOf(n) })),
  };
  const t = trajectory('t1', [[{ messages, tools, completion: completions[0], latencyMs: 1, decision }]]);
  // The agent loop appends the parsed answer right after the messages the call was sent with.
  return { ...t, messages: [...messages, played] };
}

test('every answer picked 1: the two other picks are written as answers, with their rewards and the played prompt', () => {
  const t = decisionTrajectory(answerPicking(1), [1, 1, 1]);
  const { answers, skipped } = exploredAnswers([t], 2, new Rng(1), assets);
  assert.equal(skipped, 0);
  assert.deepEqual(answers.map((a) => a.sample), [4, 5], 'numbered after the 4 completions');
  assert.deepEqual(answers.map((a) => a.completion.text).sort(), [textPicking(2), textPicking(3)].sort());
  for (const a of answers) assert.equal(a.reward, a.completion.text === textPicking(2) ? 1 : 0);
  for (const a of answers) {
    assert.deepEqual(a.completion.completionTokenIds, assets.tokenizer.encode(a.completion.text));
    assert.deepEqual(a.completion.promptTokenIds, PROMPT);
    assert.equal(a.completion.policyVersion, 3);
    assert.deepEqual([a.trajectoryId, a.turn, a.call, a.explored, a.invalid], ['t1', 0, 0, true, false]);
  }
});

test('an action some answer took is not explored again; count caps the rest; the Rng picks which', () => {
  const t = decisionTrajectory(answerPicking(1), [3, 1, 1]);
  assert.deepEqual(exploredAnswers([t], 2, new Rng(1), assets).answers.map((a) => a.completion.text), [textPicking(2)]);
  const one = new Set<string>();
  for (let seed = 0; seed < 16; seed++) {
    const { answers } = exploredAnswers([decisionTrajectory(answerPicking(1), [1])], 1, new Rng(seed), assets);
    assert.equal(answers.length, 1);
    assert.deepEqual(exploredAnswers([decisionTrajectory(answerPicking(1), [1])], 1, new Rng(seed), assets).answers, answers, 'the same Rng draws the same');
    one.add(answers[0].completion.text);
  }
  assert.deepEqual([...one].sort(), [textPicking(2), textPicking(3)].sort(), 'either other pick, by the Rng');
});

test('a played answer that took no legal action is skipped', () => {
  const { answers, skipped } = exploredAnswers([decisionTrajectory({ role: 'assistant', content: 'hello' }, [1])], 2, new Rng(1), assets);
  assert.deepEqual([answers.length, skipped], [0, 1]);
});

test('the group with its explored answers: advantages by hand, and samples marked explored', () => {
  const t = decisionTrajectory(answerPicking(1), [1, 1, 1]);
  const { answers } = exploredAnswers([t], 2, new Rng(1), assets);
  const result = decisionAdvantages([t], {}, answers);
  // Rewards [0, 0, 0, 0, 1, 0] (in some order for the last two): mean 1/6, sample std √(1/6).
  const sd = Math.sqrt(1 / 6) + 1e-4;
  assert.equal(result.samples.length, 6);
  assert.equal(result.stats.zeroVarianceGroups, 0, 'without them the decision would tie');
  for (const s of result.samples) {
    const expected = s.reward === 1 ? 5 / 6 / sd : -1 / 6 / sd;
    assert.ok(Math.abs(s.advantage - expected) < 1e-9, `${s.sample}: ${s.advantage} vs ${expected}`);
  }
  assert.equal(decisionAdvantages([t]).stats.zeroVarianceGroups, 1);
  const batch = buildDecisionSamples([t], result.samples);
  assert.deepEqual(batch.samples.map((s) => s.explored ?? false), [false, false, false, false, true, true]);
  const explored = batch.samples[4];
  assert.deepEqual(explored.tokens, [...PROMPT, ...answers[0].completion.completionTokenIds!]);
  assert.ok(explored.advantages.slice(PROMPT.length).every((a) => a === explored.advantages.at(-1)));
  assert.throws(() => decisionAdvantages([t], {}, [{ ...answers[0], trajectoryId: 'other' }]), /no such decision/);
  assert.throws(() => decisionAdvantages([t], {}, [{ ...answers[0], sample: 2 }]), /taken/);
});

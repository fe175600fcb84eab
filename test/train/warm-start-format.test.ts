/**
 * The warm start on a toy env: the demonstrations are rendered exactly as the policy renders its
 * prompts, and a small supervised budget takes a tiny random model from answering nothing legal to
 * answering in the tool-call format (the sampled invalid rate falls).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Message, ToolSpec } from '../../src/core/messages.ts';
import { initEngine, tree } from '../../src/model/engine.ts';
import { toParams } from '../../src/model/params.ts';
import { createDefaultModel } from '../../src/train/default-model.ts';
import { LayoutShapes, type LayoutSample } from '../../src/train/rl-batch.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { trainerPolicy } from '../../src/train/trainer-policy.ts';
import { demoSeeds } from '../../src/train/trainer-seeds.ts';
import { warmStart } from '../../src/train/warm-start.ts';
import { assistantCompletionText } from '../../src/model/assistant-completion-text.ts';
import { MAX_DEMONSTRATED_ACTIONS, answerGroup, demonstrationSamples, otherAnswers, packEpisode, warmStartDemonstrations, type DemoCall, type Demonstrations } from '../../src/train/warm-start-demos.ts';
import { pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';

/** The answer groups of every decision that has one (warm-start-demos.ts answerGroup). */
function answerGroups(demos: Demonstrations, maxTokens = Infinity): LayoutSample[][] {
  return demos.episodeCalls.flat().map((c) => answerGroup(c, maxTokens)).filter((g): g is LayoutSample[] => g !== null);
}

before(async () => {
  await initEngine({ threads: 1 });
});

const settings = parseTrainConfig(
  tinyTrainConfig({ warmStart: { maxSteps: 60, answerSteps: 6, batchSize: 16, demoEpisodes: 60, checkEvery: 20, checkEpisodes: 24, optimizer: { lr: 1e-2, warmupSteps: 5 } } }),
);

async function tinyModel() {
  return createDefaultModel({ spec: pickSpec, options: {}, seed: 1, corpusEpisodes: 30, shape: settings.model });
}

type TinyModel = Awaited<ReturnType<typeof tinyModel>>;

/** The warm start of the tiny model on pickSpec with the given step settings and batch shapes. */
function warmStartOn(
  model: TinyModel,
  policy: ReturnType<typeof trainerPolicy>,
  steps: typeof settings.warmStart,
  shapes: LayoutShapes,
  onStep?: (step: number, maxSteps: number) => void,
) {
  return warmStart({
    spec: pickSpec,
    options: {},
    assets: model.assets,
    params: toParams(model.params),
    policy,
    settings: steps,
    runSeed: 0,
    maxTurns: 1,
    maxTokens: null,
    temperature: 1,
    concurrency: 64,
    shapes,
    onStep,
  });
}

test('demonstrations: the policy prompt plus the answer as the template renders it, through end of turn', async () => {
  const { assets } = await tinyModel();
  const promptIds = (messages: Message[], tools: ToolSpec[]) => assets.tokenizer.encode(assets.chatTemplate.render(messages, { tools, addGenerationPrompt: true }));
  const demos = await warmStartDemonstrations({ spec: pickSpec, options: {}, assets, promptIds, seeds: demoSeeds(0, 5), maxTurns: 1, languageModel: false });
  assert.equal(demos.episodes, 5);
  assert.equal(demos.calls, 5);
  const first = demonstrationSamples(demos)[0];
  const text = assets.tokenizer.decode(first.tokens.filter((_, i) => first.lossMask[i] === 1));
  assert.match(text, /^<tool_call>\n\{"name": "pick", "arguments": \{"n": [123]\}\}\n<\/tool_call><\|im_end\|>$/);
  assert.equal(first.tokens.at(-1), assets.stopTokenIds[0]);
  // The prompt part is the generation prompt of the system + observation messages, as the default
  // model's template renders them: a short system turn naming the tools, then the observation.
  const prompt = assets.tokenizer.decode(first.tokens.filter((_, i) => first.lossMask[i] === 0));
  assert.match(prompt, /^<\|im_start\|>system\npick<\|im_end\|>\n<\|im_start\|>user\nTarget [123]\.<\|im_end\|>\n<\|im_start\|>assistant\n$/);
  // Every legal action's answer at each decision, side by side: the taken one first, the other two
  // with the same prompt, in one list (so in one batch); only the answers are trained.
  assert.equal(demos.otherAnswers, 10);
  const groups = answerGroups(demos);
  assert.equal(groups.length, 5);
  assert.deepEqual(groups[0][0], first);
  const answers = groups[0].map((s) => {
    assert.deepEqual(s.tokens.slice(0, s.lossMask.indexOf(1)), first.tokens.slice(0, first.lossMask.indexOf(1)));
    return assets.tokenizer.decode(s.tokens.filter((_, i) => s.lossMask[i] === 1)).match(/"n": (\d)/)![1];
  });
  assert.deepEqual(answers.sort(), ['1', '2', '3']);
  // With languageModel the observations are trained too (every token after the first), answers unchanged;
  // the answer groups still train the answers only.
  const lm = await warmStartDemonstrations({ spec: pickSpec, options: {}, assets, promptIds, seeds: demoSeeds(0, 5), maxTurns: 1, languageModel: true });
  const lmFirst = demonstrationSamples(lm)[0];
  assert.deepEqual(lmFirst.tokens, first.tokens);
  assert.deepEqual(lmFirst.lossMask, first.tokens.map((_, i) => (i === 0 ? 0 : 1)));
  assert.deepEqual(answerGroups(lm), groups);
  assert.deepEqual(answerGroups(lm, first.tokens.length - 1), []);
  assert.throws(
    () => assistantCompletionText({ ...assets, stopTokenIds: [] }, [{ role: 'user', content: 'x' }], [], { role: 'assistant', content: 'y' }),
    /no end-of-turn token/,
  );
});

test('an episode packs into one sequence when its calls are prefix-stable, else one per call', () => {
  const calls = [
    { promptIds: [1, 2, 3], completionIds: [4, 5] },
    { promptIds: [1, 2, 3, 4, 5, 6], completionIds: [7] },
  ];
  assert.deepEqual(packEpisode(calls), [{ tokens: [1, 2, 3, 4, 5, 6, 7], lossMask: [0, 0, 0, 1, 1, 0, 1] }]);
  const unstable = [calls[0], { promptIds: [1, 2, 9, 4, 5, 6], completionIds: [7] }];
  assert.equal(packEpisode(unstable).length, 2);
});

test('a refused answer is never trained: masked out of its packed episode, or left out with the prompts after it', () => {
  const calls: DemoCall[] = [
    { promptIds: [1, 2], completionIds: [3, 4], refused: true },
    { promptIds: [1, 2, 3, 4, 5], completionIds: [6, 7] },
    { promptIds: [1, 2, 3, 4, 5, 6, 7, 8], completionIds: [9] },
  ];
  assert.deepEqual(packEpisode(calls), [{ tokens: [1, 2, 3, 4, 5, 6, 7, 8, 9], lossMask: [0, 0, 0, 0, 0, 1, 1, 0, 1] }]);
  // As a language model: every token after the first but the refused answer's.
  assert.deepEqual(packEpisode(calls, Infinity, true), [{ tokens: [1, 2, 3, 4, 5, 6, 7, 8, 9], lossMask: [0, 1, 0, 0, 1, 1, 1, 1, 1] }]);
  // A template that re-renders earlier turns: the refused call has no sequence, and the calls after
  // it train their answers alone, whose prompts hold the refused answer.
  const unstable: DemoCall[] = [{ promptIds: [1, 2], completionIds: [3, 4] }, { promptIds: [1, 2, 3, 9], completionIds: [5], refused: true }, { promptIds: [1, 2, 3, 9, 5, 8], completionIds: [6] }];
  assert.deepEqual(packEpisode(unstable, Infinity, true), [
    { tokens: [1, 2, 3, 4], lossMask: [0, 1, 1, 1] },
    { tokens: [1, 2, 3, 9, 5, 8, 6], lossMask: [0, 0, 0, 0, 0, 0, 1] },
  ]);
});

test('an episode longer than a row keeps the calls that fit, cut at a call boundary', () => {
  const calls = [
    { promptIds: [1, 2, 3], completionIds: [4, 5] },
    { promptIds: [1, 2, 3, 4, 5, 6], completionIds: [7] },
    { promptIds: [1, 2, 3, 4, 5, 6, 7, 8], completionIds: [9, 10] },
  ];
  // 7 tokens hold the first two calls whole; the third call's answer is not trained in part.
  assert.deepEqual(packEpisode(calls, 7), [{ tokens: [1, 2, 3, 4, 5, 6, 7], lossMask: [0, 0, 0, 1, 1, 0, 1] }]);
  assert.deepEqual(packEpisode(calls, 9), packEpisode(calls, 7));
  assert.deepEqual(packEpisode(calls, 4), []);
  assert.equal(packEpisode(calls, 10)[0].tokens.length, 10);
  // A language-model sample is cut the same way and trains every token after the first.
  const demos = { episodeCalls: [calls], languageModel: true, episodes: 1, calls: 3, refusedCalls: 0, otherAnswers: 0, maxCompletionTokens: 2, meanCompletionTokens: 5 / 3, meanPromptTokens: 17 / 3 };
  assert.deepEqual(demonstrationSamples(demos, 7), [{ tokens: [1, 2, 3, 4, 5, 6, 7], lossMask: [0, 1, 1, 1, 1, 1, 1] }]);
  // Answer groups: a decision whose answers all fit; one that does not is left out whole.
  const withOthers = [{ ...calls[0], otherCompletionIds: () => [[11, 12, 13]] }, calls[1], { ...calls[2], otherCompletionIds: () => [[13]] }];
  assert.deepEqual(answerGroups({ ...demos, episodeCalls: [withOthers] }, 6), [
    [
      { tokens: [1, 2, 3, 4, 5], lossMask: [0, 0, 0, 1, 1] },
      { tokens: [1, 2, 3, 11, 12, 13], lossMask: [0, 0, 0, 1, 1, 1] },
    ],
  ]);
  assert.deepEqual(answerGroups({ ...demos, episodeCalls: [withOthers] }, 5), []);
});

test('the other legal actions keep the answer\'s report arguments; a call of no listed action gets none', () => {
  const legal = [
    { name: 'move', arguments: { to: 'a' } },
    { name: 'move', arguments: { to: 'b' } },
    { name: 'wait', arguments: {} },
  ];
  const answer: Message = { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'move', arguments: { to: 'b', forecast: 0.3 } }] };
  assert.deepEqual(otherAnswers(answer, legal), [
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'move', arguments: { to: 'a', forecast: 0.3 } }] },
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'wait', arguments: { forecast: 0.3 } }] },
  ]);
  assert.deepEqual(otherAnswers({ ...answer, toolCalls: [{ id: 'c1', name: 'move', arguments: { to: 'z' } }] }, legal), []);
  assert.deepEqual(otherAnswers({ role: 'assistant', content: 'no call' }, legal), []);
  const many = Array.from({ length: MAX_DEMONSTRATED_ACTIONS + 1 }, (_, i) => ({ name: 'move', arguments: { to: String(i) } }));
  assert.deepEqual(otherAnswers({ ...answer, toolCalls: [{ id: 'c1', name: 'move', arguments: { to: '0' } }] }, many), []);
});

test('a small supervised budget teaches a tiny model the answer format (invalid rate falls)', async () => {
  const model = await tinyModel();
  const params = toParams(model.params);
  const policy = trainerPolicy(model.assets, params, { name: 'tiny', modelId: 'tiny', version: 0, maxBatchRows: 64 });
  tree.dispose(params);
  const checks: number[] = [];
  try {
    const result = await warmStartOn(model, policy, { ...settings.warmStart, maxSteps: 0 }, new LayoutShapes({ rows: settings.update.rows, length: settings.update.rowLength }));
    checks.push(result.checks[0].invalidRate);
    tree.dispose(result.params);
    const trained = await warmStartOn(model, policy, settings.warmStart, new LayoutShapes({ rows: settings.update.rows, length: settings.update.rowLength }));
    tree.dispose(trained.params);
    checks.push(...trained.checks.map((c) => c.invalidRate));
    assert.equal(trained.maxTokens, trained.demos.maxCompletionTokens + 16);
    // It ends with the answers-only steps, and the format check sampled the weights after them.
    assert.equal(trained.answerSteps, 6);
    assert.equal(trained.answerRounds, 1);
    assert.deepEqual(trained.checks.map((c) => c.step), [66]);
    assert.equal(trained.steps, 66);
    assert.equal(trained.losses.length, trained.steps);
    assert.ok(trained.losses[0].loss > 2 * trained.losses.at(-1)!.loss, `loss ${trained.losses[0].loss} -> ${trained.losses.at(-1)!.loss}`);
  } finally {
    await policy.close();
  }
  assert.equal(checks[0], 1, 'the random model answers nothing legal');
  assert.ok(checks.at(-1)! <= 0.25, `invalid rates along the warm start: ${checks.join(', ')}`);
});

test('a failed first format check returns to the language-model phase: its later steps are the same as without the check, and only the last answers-only round is kept', async () => {
  const model = await tinyModel();
  const policy = trainerPolicy(model.assets, toParams(model.params), { name: 'tiny', modelId: 'tiny', version: 0, maxBatchRows: 64 });
  const shapes = () => new LayoutShapes({ rows: settings.update.rows, length: settings.update.rowLength });
  try {
    // A target no check can meet (an invalid rate below 0): the first check after 20 steps and an
    // answers-only round, then one on the language model's own weights after 40, and at the budget
    // (60) a last round and its check.
    const progress: [number, number][] = [];
    const retried = await warmStartOn(model, policy, { ...settings.warmStart, minSteps: 20, targetInvalidRate: 0 }, shapes(), (step, maxSteps) => progress.push([step, maxSteps]));
    const direct = await warmStartOn(model, policy, { ...settings.warmStart, minSteps: 60 }, shapes());
    try {
      assert.equal(retried.reached, false);
      assert.equal(retried.answerRounds, 2);
      assert.deepEqual(retried.checks.map((c) => c.step), [26, 40, 66]);
      assert.equal(retried.steps, 66);
      assert.deepEqual(retried.losses.map((l) => l.step), Array.from({ length: 66 }, (_, i) => i + 1));
      // The progress line counts every update, the discarded round's too, against a bound they reach: 60 + 2 × 6.
      assert.deepEqual(progress, Array.from({ length: 72 }, (_, i) => [i + 1, 72]));
      assert.equal(direct.answerRounds, 1);
      assert.deepEqual(direct.checks.map((c) => c.step), [66]);
      assert.deepEqual(retried.losses, direct.losses);
      for (const name of Object.keys(direct.params)) {
        assert.deepEqual(await retried.params[name].ref.data(), await direct.params[name].ref.data(), name);
      }
    } finally {
      tree.dispose(retried.params);
      tree.dispose(direct.params);
    }
  } finally {
    await policy.close();
  }
});

test('the warm start measures the row length when none is set, and refuses a row that holds no demonstration', async () => {
  const model = await tinyModel();
  const policy = trainerPolicy(model.assets, toParams(model.params), { name: 'tiny', modelId: 'tiny', version: 0, maxBatchRows: 64 });
  const request = (shapes: LayoutShapes) => warmStartOn(model, policy, { ...settings.warmStart, maxSteps: 0 }, shapes);
  try {
    const measured = new LayoutShapes({ rows: 4, length: null });
    const result = await request(measured);
    tree.dispose(result.params);
    assert.ok(measured.lengthFixed && measured.length >= 64 && measured.length % 32 === 0, `measured ${measured.length}`);
    assert.ok(result.rlRowLength >= 64 && result.rlRowLength <= measured.length);
    await assert.rejects(request(new LayoutShapes({ rows: 4, length: 2 })), /train\.update\.rowLength: 2 holds none of the warm start's demonstrations/);
  } finally {
    await policy.close();
  }
});

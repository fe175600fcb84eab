/**
 * Refused answers in the warm start's demonstrations (warm-start-refusals.ts): on Nim (refused
 * answers retried) a share of the decisions first answers an action the env refuses, then, after
 * the env's own feedback, a legal one; only that one is trained. Blackjack ends an episode at a
 * refused answer, so it demonstrates none.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Message, ToolSpec } from '../../src/core/messages.ts';
import { Rng } from '../../src/core/random.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { nimSpec } from '../../src/envs/nim/spec.ts';
import { initEngine } from '../../src/model/engine.ts';
import { createDefaultModel } from '../../src/train/default-model.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { demoSeeds } from '../../src/train/trainer-seeds.ts';
import { demonstrationSamples, warmStartDemonstrations } from '../../src/train/warm-start-demos.ts';
import { refusedAction } from '../../src/train/warm-start-refusals.ts';
import { tinyTrainConfig } from './trainer-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const shape = parseTrainConfig(tinyTrainConfig({})).model;
const nimOptions = nimSpec.options.parse({ heaps: 'random', starts: 'winning', opponent: 'random' });

async function demosOf<O extends Record<string, unknown>>(spec: typeof nimSpec | typeof blackjackSpec, options: O, refusals: number, languageModel = false) {
  const { assets } = await createDefaultModel({ spec: spec as never, options, seed: 1, corpusEpisodes: 30, shape });
  const promptIds = (messages: Message[], tools: ToolSpec[]) => assets.tokenizer.encode(assets.chatTemplate.render(messages, { tools, addGenerationPrompt: true }));
  const demos = await warmStartDemonstrations({ spec: spec as never, options, assets, promptIds, seeds: demoSeeds(0, 24), maxTurns: 20, languageModel, refusals });
  return { demos, assets };
}

test('a refused action is a legal one with a number argument past every legal value of it', () => {
  const legal = [1, 2, 3].flatMap((count) => [{ name: 'take', arguments: { heap: 1, count } }]).concat([{ name: 'take', arguments: { heap: 2, count: 1 } }]);
  for (let seed = 0; seed < 20; seed++) {
    const refused = refusedAction(legal, legal[0], new Rng(seed))!;
    const { heap, count } = refused.arguments as { heap: number; count: number };
    assert.ok((heap === 1 && count >= 4 && count <= 6) || (count === 1 && heap >= 3 && heap <= 5), JSON.stringify(refused));
  }
  assert.equal(refusedAction([{ name: 'stick', arguments: {} }], { name: 'stick', arguments: {} }, new Rng(0)), null);
});

test('Nim demonstrations: refused answers, each retried after the env\'s feedback, none of them trained', async () => {
  const { demos, assets } = await demosOf(nimSpec, nimOptions, 0.5);
  const decisions = demos.calls - demos.refusedCalls;
  assert.ok(demos.refusedCalls > 0.3 * decisions && demos.refusedCalls < 0.7 * decisions, `${demos.refusedCalls} refused of ${decisions} decisions`);
  for (const calls of demos.episodeCalls) {
    calls.forEach((call, i) => {
      if (!call.refused) return;
      // One refusal a decision: the next call is its retry, legal, and reads the env's own message.
      const retry = calls[i + 1];
      assert.ok(retry && !retry.refused, 'a refused answer is followed by a legal retry');
      const feedback = assets.tokenizer.decode(retry.promptIds.slice(call.promptIds.length + call.completionIds.length));
      // The tool's schema bounds the heap number (the agent loop checks it); the env checks the rest.
      assert.match(feedback, /Invalid answer: (count must be an integer 1\.\.\d+ \(heap \d has \d+\), got \d+|tool 'take': arguments\.heap must be <= 3, got \d+|heap \d is empty)\. Try again\./);
    });
  }
  // Packed as a language model, no token of a refused answer is trained; the others' are.
  const samples = demonstrationSamples({ ...demos, languageModel: true });
  assert.equal(samples.length, demos.episodeCalls.length);
  demos.episodeCalls.forEach((calls, e) => {
    for (const call of calls) {
      const span = samples[e].lossMask.slice(call.promptIds.length, call.promptIds.length + call.completionIds.length);
      assert.deepEqual(span, span.map(() => (call.refused ? 0 : 1)));
    }
  });
  // Without refusals (the default) none are shown.
  const { demos: plain } = await demosOf(nimSpec, nimOptions, 0);
  assert.equal(plain.refusedCalls, 0);
});

test('an env that ends the episode at a refused answer demonstrates none', async () => {
  const { demos } = await demosOf(blackjackSpec, blackjackSpec.options.parse({}), 1);
  assert.equal(demos.refusedCalls, 0);
  assert.ok(demos.calls > 0);
});

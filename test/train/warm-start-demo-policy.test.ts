/**
 * The demonstrations' policy (warm-start-demos.ts DemoRequest.demoPolicy, a diagnostic: bench/oracle-
 * imitation.ts): with the oracle, every demonstrated answer is the oracle's action and no other
 * legal answer is recorded (so the warm start makes no answer groups and runs no answers-only
 * steps, also through trainRun); without it the random policy plays, as before.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { Message, ToolSpec } from '../../src/core/messages.ts';
import type { EnvSpec } from '../../src/envs/env.ts';
import { initEngine, tree } from '../../src/model/engine.ts';
import { toParams } from '../../src/model/params.ts';
import { oraclePolicy } from '../../src/policy/scripted.ts';
import { createDefaultModel } from '../../src/train/default-model.ts';
import { LayoutShapes } from '../../src/train/rl-batch.ts';
import { openStore } from '../../src/store/open.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { trainRun, type TrainEvent } from '../../src/train/trainer.ts';
import { trainerPolicy } from '../../src/train/trainer-policy.ts';
import { demoSeeds } from '../../src/train/trainer-seeds.ts';
import { warmStart } from '../../src/train/warm-start.ts';
import { warmStartDemonstrations, type Demonstrations } from '../../src/train/warm-start-demos.ts';
import { newTrainRun, pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

/** The pick env with an oracle: pick the target (its state). */
const oraclePickSpec: EnvSpec<Record<string, never>> = {
  ...pickSpec,
  create: (options) => {
    const env = pickSpec.create(options);
    return Object.assign(env, { oracle: () => ({ action: { name: 'pick', arguments: { n: env.state().target } } }) });
  },
};

const settings = parseTrainConfig(tinyTrainConfig({ warmStart: { maxSteps: 4, minSteps: 4, answerSteps: 3, batchSize: 8, demoEpisodes: 30, checkEvery: 4, checkEpisodes: 4 } }));

before(async () => {
  await initEngine({ threads: 1 });
});

async function tinyModel() {
  return createDefaultModel({ spec: oraclePickSpec, options: {}, seed: 1, corpusEpisodes: 30, shape: settings.model });
}

/** Each demonstrated call's target (from its prompt) and picked number (from its completion), decoded. */
function targetsAndPicks(demos: Demonstrations, decode: (ids: number[]) => string): { target: number; pick: number }[] {
  return demos.episodeCalls.flat().map((call) => {
    const target = /Target (\d)\.<\|im_end\|>\n<\|im_start\|>assistant\n$/.exec(decode(call.promptIds));
    const pick = /^<tool_call>\n\{"name": "pick", "arguments": \{"n": (\d)\}\}\n<\/tool_call><\|im_end\|>$/.exec(decode(call.completionIds));
    assert.ok(target && pick, `a demonstrated call: ${decode(call.promptIds)} -> ${decode(call.completionIds)}`);
    return { target: Number(target[1]), pick: Number(pick[1]) };
  });
}

test('with demoPolicy the oracle plays every demonstration and no other answer is recorded; without it, random plays and records the others', async () => {
  const { assets } = await tinyModel();
  const promptIds = (messages: Message[], tools: ToolSpec[]) => assets.tokenizer.encode(assets.chatTemplate.render(messages, { tools, addGenerationPrompt: true }));
  const decode = (ids: number[]) => assets.tokenizer.decode(ids);
  const request = { spec: oraclePickSpec, options: {}, assets, promptIds, seeds: demoSeeds(0, 30), maxTurns: 1, languageModel: true };

  const oracle = await warmStartDemonstrations({ ...request, demoPolicy: oraclePolicy() });
  assert.equal(oracle.calls, 30);
  const shown = targetsAndPicks(oracle, decode);
  assert.deepEqual(shown.map((s) => s.pick), shown.map((s) => s.target));
  // The seeds show every target, so a constant answer could not pass.
  assert.deepEqual([...new Set(shown.map((s) => s.target))].sort(), [1, 2, 3]);
  assert.equal(oracle.otherAnswers, 0);
  assert.ok(oracle.episodeCalls.flat().every((c) => c.otherCompletionIds === undefined));

  // The default: random legal picks on the same seeds (some off the target), the other two answers recorded at each decision.
  const random = await warmStartDemonstrations(request);
  const played = targetsAndPicks(random, decode);
  assert.deepEqual(played.map((s) => s.target), shown.map((s) => s.target));
  assert.ok(played.some((s) => s.pick !== s.target), `random picks: ${played.map((s) => s.pick).join(' ')}`);
  assert.equal(random.otherAnswers, 60);
  const picks = random.episodeCalls.flat().map((c) => [c.completionIds, ...c.otherCompletionIds!()].map((ids) => decode(ids).match(/"n": (\d)/)![1]).sort());
  assert.ok(picks.every((p) => p.join() === '1,2,3'));
});

test('a warm start on the oracle\'s demonstrations runs no answers-only steps, even when answerSteps asks for some', async () => {
  const model = await tinyModel();
  const policy = trainerPolicy(model.assets, toParams(model.params), { name: 'tiny', modelId: 'tiny', version: 0, maxBatchRows: 64 });
  const run = (demoPolicy?: ReturnType<typeof oraclePolicy>) =>
    warmStart({
      spec: oraclePickSpec,
      options: {},
      assets: model.assets,
      params: toParams(model.params),
      policy,
      settings: settings.warmStart,
      runSeed: 0,
      maxTurns: 1,
      maxTokens: null,
      temperature: 1,
      concurrency: 64,
      shapes: new LayoutShapes({ rows: settings.update.rows, length: settings.update.rowLength }),
      demoPolicy,
    });
  try {
    const imitation = await run(oraclePolicy());
    tree.dispose(imitation.params);
    assert.deepEqual([imitation.steps, imitation.answerSteps, imitation.answerRounds, imitation.demos.otherAnswers], [4, 0, 0, 0]);
    const usual = await run();
    tree.dispose(usual.params);
    assert.deepEqual([usual.steps, usual.answerSteps, usual.answerRounds, usual.demos.otherAnswers], [7, 3, 1, 60]);
  } finally {
    await policy.close();
  }
});

test('trainRun passes warmStartDemoPolicy to the warm start, and runs no RL step when steps is 0', async () => {
  const store = await openStore(join(tempDir('spindle-demo-policy-'), 'spindle.db'));
  const events: TrainEvent[] = [];
  try {
    const runId = await newTrainRun(store);
    const outcome = await trainRun({
      spec: oraclePickSpec,
      options: {},
      settings: parseTrainConfig({ ...tinyTrainConfig({ warmStart: settings.warmStart }), steps: 0 }),
      store,
      runId,
      resume: null,
      warmStartDemoPolicy: oraclePolicy(),
      onEvent: (e) => events.push(e),
    });
    await outcome.policy.close();
    assert.equal(outcome.steps, 0);
    assert.deepEqual([outcome.warmStart?.steps, outcome.warmStart?.answerSteps], [4, 0]);
    assert.ok(events.some((e) => e.type === 'phase' && e.phase === 'warm-start' && e.message.includes('oracle-policy episodes')));
    assert.ok(!events.some((e) => e.type === 'step'));
  } finally {
    await store.close();
  }
});

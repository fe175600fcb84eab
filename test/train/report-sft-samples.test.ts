/**
 * Supervised report samples from recorded hmm trajectories (report=true): the prompt ids the sampler
 * saw, then the oracle's answer (the taken action with the oracle's report targets) as the default
 * model's chat template writes a tool call, through the end-of-turn id; only that part supervised.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Trajectory } from '../../src/core/trajectory.ts';
import { hmmSpec } from '../../src/envs/hmm/spec.ts';
import { assistantCompletionText } from '../../src/model/assistant-completion-text.ts';
import { initEngine } from '../../src/model/engine.ts';
import { toParams } from '../../src/model/params.ts';
import type { EmbeddedPolicy } from '../../src/policy/embedded.ts';
import { oraclePolicy, randomPolicy } from '../../src/policy/scripted.ts';
import type { Policy } from '../../src/policy/policy.ts';
import { reportRecordOf } from '../../src/rewards/report-record.ts';
import { reportTargetCallText } from '../../src/rewards/report-target-text.ts';
import { runRollouts } from '../../src/rollout/rollouts.ts';
import { createDefaultModel, type ModelAssets } from '../../src/train/default-model.ts';
import { reportSftSamples } from '../../src/train/report-sft-samples.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { trainerPolicy } from '../../src/train/trainer-policy.ts';
import { tinyTrainConfig } from './trainer-fixtures.ts';

const options = hmmSpec.options.parse({ report: true, horizon: 3 });
let assets: ModelAssets;
let embedded: EmbeddedPolicy;

before(async () => {
  await initEngine({ threads: 1 });
  const model = await createDefaultModel({ spec: hmmSpec, options, seed: 1, corpusEpisodes: 30, shape: parseTrainConfig(tinyTrainConfig()).model });
  assets = model.assets;
  embedded = trainerPolicy(assets, toParams(model.params), { name: 'tiny', modelId: 'tiny', version: 0, maxBatchRows: 8 });
});

after(async () => {
  await embedded?.close();
});

/**
 * hmm episodes of a scripted policy, with each call's prompt ids as the embedded policy renders and
 * records them (a scripted policy writes text only; the tiny random model would answer nothing legal).
 */
async function recorded(policy: Policy, withIds: boolean): Promise<Trajectory[]> {
  const { trajectories } = await runRollouts({ spec: hmmSpec, options, policy, seeds: [3, 4], episode: { maxTurns: 3 } });
  if (withIds) {
    for (const t of trajectories) {
      for (const turn of t.turns) {
        for (const call of turn.calls) {
          call.completion.promptTokenIds = embedded.promptIds(call.messages, call.tools);
          call.completion.tokenIdsExact = true;
        }
      }
    }
  }
  return trajectories;
}

/** The JSON inside `<tool_call>\n...\n</tool_call>` of a completion's text. */
function callJson(text: string): unknown {
  const m = /^<tool_call>\n(.*)\n<\/tool_call><\|im_end\|>$/s.exec(text);
  assert.ok(m, `a tool call through the end of turn: ${JSON.stringify(text)}`);
  return JSON.parse(m[1]);
}

test('one sample per decision with a report: the recorded prompt ids, then the target call, only it supervised', async () => {
  const trajectories = await recorded(randomPolicy(), true);
  const turns = trajectories.flatMap((t) => t.turns);
  assert.equal(turns.length, 6);
  assert.ok(turns.every((turn) => reportRecordOf(turn) !== null), 'every random answer is legal and recorded a report');
  const { samples, stats } = reportSftSamples(trajectories, assets);
  assert.equal(samples.length, 6);
  assert.deepEqual({ ...stats, tokens: 0, targetTokens: 0 }, { decisions: 6, samples: 6, tokens: 0, targetTokens: 0, withoutExactIds: 0 });
  samples.forEach((s, k) => {
    const turn = turns[k];
    const promptIds = turn.calls.at(-1)!.completion.promptTokenIds!;
    const p = promptIds.length;
    assert.deepEqual(s.tokens.slice(0, p), promptIds);
    assert.ok(s.lossMask.every((m) => m === 0), 'no RL target');
    assert.deepEqual(s.sftMask, s.tokens.map((_, i) => (i >= p ? 1 : 0)));
    const completion = s.tokens.slice(p);
    assert.equal(completion.at(-1), assets.stopTokenIds[0]);
    const text = assets.tokenizer.decode(completion);
    assert.deepEqual(assets.tokenizer.encode(text), completion, 'the ids are the encoding of the target text');
    // The target call: the action the agent took, with the oracle's posterior as p_state, not its own.
    const target = JSON.parse(reportTargetCallText(turn)!.slice('<tool_call>'.length, -'</tool_call>'.length)) as { arguments: Record<string, unknown> };
    assert.deepEqual(callJson(text), target);
    assert.equal(target.arguments.state, turn.actions[0].arguments.state);
    assert.deepEqual(target.arguments.p_state, reportRecordOf(turn)!.targets.p_state);
    assert.notDeepEqual(target.arguments.p_state, turn.actions[0].arguments.p_state);
  });
  assert.equal(stats.targetTokens, samples.reduce((n, s) => n + s.sftMask!.reduce((a, b) => a + b, 0), 0));
  assert.equal(stats.tokens, samples.reduce((n, s) => n + s.tokens.length, 0));
});

test("the oracle's own answers give targets equal to the warm start's demonstration of them", async () => {
  const trajectories = await recorded(oraclePolicy(), true);
  const { samples } = reportSftSamples(trajectories, assets);
  const turns = trajectories.flatMap((t) => t.turns.map((turn) => ({ t, turn })));
  assert.equal(samples.length, turns.length);
  samples.forEach((s, k) => {
    const { t, turn } = turns[k];
    const call = turn.calls.at(-1)!;
    // As warm-start-demos.ts turns an answer into ids: the template's render of the recorded answer.
    const demo = assets.tokenizer.encode(assistantCompletionText(assets, call.messages, call.tools, t.messages[call.messages.length]));
    assert.deepEqual(s.tokens.slice(call.completion.promptTokenIds!.length), demo);
  });
});

test('decisions whose prompt ids are not the exact recorded ones are left out and counted', async () => {
  const { samples, stats } = reportSftSamples(await recorded(randomPolicy(), false), assets);
  assert.equal(samples.length, 0);
  assert.equal(stats.decisions, 6);
  assert.equal(stats.withoutExactIds, 6);
});

/**
 * A user's agent written with the Vercel AI SDK (generateText + the OpenAI-compatible provider),
 * multi-step and tool-using, pointed at `spindle proxy` (a real process, started with
 * --request-token-ids) in front of a loopback vLLM-shaped upstream. Two episodes of one task are
 * recorded, scored through the proxy, read back from the store, and turned into training samples
 * (and the Atropos layout) whose completion tokens and logprobs are exactly what the upstream sampled.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { computeAdvantages } from '../../src/advantage/compute.ts';
import { scoredGroupsFromTrajectories } from '../../src/advantage/from-trajectories.ts';
import type { Trajectory } from '../../src/core/trajectory.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { toAtroposScoredData } from '../../src/train/atropos.ts';
import { buildSamples } from '../../src/train/samples.ts';
import { startProxyProcess, type ProxyProcess } from './fixtures/proxy-process.ts';
import { startToyUpstream, type Sampled, type ToyUpstream } from './fixtures/proxy-upstream.ts';

let upstream: ToyUpstream;
let proxy: ProxyProcess;
let store: Store;

before(async () => {
  upstream = await startToyUpstream(11);
  proxy = await startProxyProcess(upstream.url, ['--request-token-ids']);
  store = await openStore(proxy.db);
});

after(async () => {
  await proxy?.stop();
  await store?.close();
  await upstream?.close();
});

/** The user's agent: it only knows a base URL (and, optionally, extra headers). */
async function runAgent(baseURL: string, question: string, headers?: Record<string, string>) {
  const provider = createOpenAICompatible({ name: 'toy', baseURL, headers });
  let toolRuns = 0;
  const result = await generateText({
    model: provider('toy'),
    system: 'You add numbers with the add tool.',
    prompt: question,
    tools: {
      add: tool({
        description: 'Adds two numbers',
        inputSchema: z.object({ a: z.number(), b: z.number() }),
        execute: async ({ a, b }) => {
          toolRuns++;
          return a + b;
        },
      }),
    },
    stopWhen: stepCountIs(4),
    maxRetries: 0,
  });
  return { result, toolRuns };
}

async function postReward(id: string, reward: number, parts: Record<string, number>): Promise<void> {
  const res = await fetch(`${proxy.url}/trajectories/${id}/reward`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ reward, parts }),
  });
  assert.equal(res.status, 200, await res.clone().text());
}

describe('spindle proxy with a Vercel AI SDK agent', () => {
  it('records multi-step tool-using episodes that become training samples of exactly the sampled tokens', async () => {
    const start = upstream.sampled.length;
    // One agent names its trajectory in the base URL, the other with headers.
    const first = await runAgent(`${proxy.url}/t/agent-1/task/sum/v1`, 'What is 2 + 3?');
    const second = await runAgent(`${proxy.url}/v1`, 'What is 40 + 2?', { 'x-spindle-trajectory': 'agent-2', 'x-spindle-task': 'sum' });
    assert.equal(first.result.text, 'The answer is 5.');
    assert.equal(second.result.text, 'The answer is 42.');
    assert.equal(first.toolRuns, 1);
    assert.equal(first.result.steps.length, 2);
    const sampled: Sampled[] = upstream.sampled.slice(start);
    assert.equal(sampled.length, 4);

    await postReward('agent-1', 1, { correct: 1 });
    await postReward('agent-2', 0, { correct: 0 });

    const trajectories = (await store.listTrajectories(proxy.runId, { groupId: `${proxy.runId}:sum` })).items;
    assert.deepEqual(trajectories.map((t) => t.id).sort(), ['agent-1', 'agent-2']);
    const byId = new Map(trajectories.map((t) => [t.id, t]));
    const t1 = byId.get('agent-1') as Trajectory;
    assert.equal(t1.status, 'completed');
    assert.deepEqual(t1.rewardParts, { correct: 1 });
    assert.equal(t1.turns.length, 2);
    // The tool call and its answer continued one conversation.
    assert.deepEqual(t1.turns.map((turn) => turn.info.conversation), [0, 0]);
    assert.equal(t1.additionalHistories.length, 0);
    assert.deepEqual(t1.turns[0].actions.map((a) => [a.name, a.arguments]), [['add', { a: 2, b: 3 }]]);
    assert.deepEqual(t1.messages.map((m) => m.role), ['system', 'user', 'assistant', 'tool', 'assistant']);
    assert.equal(t1.turns[1].calls[0].completion.text, 'The answer is 5.');
    assert.deepEqual(t1.turns[0].calls[0].tools.map((s) => s.name), ['add']);

    const groups = scoredGroupsFromTrajectories(trajectories);
    const { advantages } = computeAdvantages(groups, { estimator: 'grpo' });
    const { samples, stats } = buildSamples(trajectories, advantages);
    assert.equal(stats.calls, 4);
    assert.equal(stats.trainedCalls, 4);
    assert.equal(Object.values(stats.excluded).reduce((a, b) => a + b, 0), 0);

    // Every trained span is one upstream sample: same completion ids, same logprobs.
    const spans = samples.flatMap((s) =>
      s.spans.map((span) => ({
        trajectoryId: s.trajectoryId,
        ids: s.tokens.slice(span.start, span.end),
        logprobs: s.logprobs.slice(span.start, span.end),
        mask: s.lossMask.slice(span.start, span.end),
        advantage: span.advantage,
      })),
    );
    assert.equal(spans.length, 4);
    const remaining = [...sampled];
    for (const span of spans) {
      const k = remaining.findIndex((s) => JSON.stringify(s.completionIds) === JSON.stringify(span.ids));
      assert.ok(k >= 0, `span of ${span.trajectoryId} matches a sampled completion`);
      assert.deepEqual(span.logprobs, remaining[k].logprobs);
      assert.ok(span.mask.every((m) => m === 1));
      remaining.splice(k, 1);
      assert.ok(span.trajectoryId === 'agent-1' ? span.advantage > 0 : span.advantage < 0);
    }
    assert.equal(remaining.length, 0);

    const atropos = toAtroposScoredData(samples, { trajectories });
    assert.equal(atropos.length, 1);
    assert.equal(atropos[0].group_overrides?.group_id, `${proxy.runId}:sum`);
    assert.deepEqual(atropos[0].tokens, samples.map((s) => s.tokens));
  });
});

/**
 * `spindle proxy` in front of `spindle serve` (the embedded sampler with a tiny checkpoint), both
 * real processes on loopback ports, driven with the `openai` client: a plain and a streamed call of
 * one trajectory are recorded with the ids and logprobs the server sampled, and become training
 * samples of exactly those tokens.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { buildSamples } from '../../src/train/samples.ts';
import { startProxyProcess, type ProxyProcess } from './fixtures/proxy-process.ts';
import { startServe, tinyCheckpointDir, type ServeProcess } from './serve-process.ts';

type WithIds = { token_ids?: number[] };
type WithPromptIds = { prompt_token_ids?: number[]; policy_version?: number };

let serve: ServeProcess;
let proxy: ProxyProcess;
let store: Store;

before(async () => {
  serve = await startServe(['--model', tinyCheckpointDir()]);
  proxy = await startProxyProcess(`${serve.url}/v1`);
  store = await openStore(proxy.db);
});

after(async () => {
  await proxy?.stop();
  await store?.close();
  await serve?.stop();
});

describe('spindle proxy in front of spindle serve', () => {
  it('records plain and streamed completions as the server sampled them', async () => {
    const client = new OpenAI({ baseURL: `${proxy.url}/t/served-1/task/hand-1/v1`, apiKey: 'k', maxRetries: 0 });
    const question = { role: 'user' as const, content: 'Your hand: 10, 6. Dealer shows 9. hit or stick?' };
    const settings = { model: 'tiny', max_tokens: 6, temperature: 1, seed: 3, logprobs: true, return_token_ids: true };

    const { data: plain, response } = await client.chat.completions.create({ ...settings, messages: [question] } as ChatCompletionCreateParamsNonStreaming).withResponse();
    // The server's version header comes back through the proxy.
    assert.equal(response.headers.get('x-spindle-policy-version'), String((plain as unknown as WithPromptIds).policy_version));
    const plainIds = (plain.choices[0] as WithIds).token_ids ?? [];
    const plainLogprobs = (plain.choices[0].logprobs?.content ?? []).map((e) => e.logprob);
    assert.ok(plainIds.length > 0);

    const followUp = [question, { role: 'assistant' as const, content: plain.choices[0].message.content ?? '' }, { role: 'user' as const, content: 'hit or stick?' }];
    const stream = await client.chat.completions.create({ ...settings, messages: followUp, stream: true, stream_options: { include_usage: true } } as ChatCompletionCreateParamsStreaming);
    let text = '';
    const streamedIds: number[] = [];
    const streamedLogprobs: number[] = [];
    let streamedPromptIds: number[] | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      text += choice?.delta?.content ?? '';
      streamedIds.push(...((choice as WithIds | undefined)?.token_ids ?? []));
      streamedLogprobs.push(...(choice?.logprobs?.content ?? []).map((e) => e.logprob));
      streamedPromptIds ??= (chunk as WithPromptIds).prompt_token_ids;
    }
    assert.ok(streamedIds.length > 0);
    // serve sends the prompt ids in its usage chunk (vLLM sends them in the first).
    assert.ok(streamedPromptIds && streamedPromptIds.length > 0);

    const res = await fetch(`${proxy.url}/trajectories/served-1/reward`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"reward": 1}' });
    assert.equal(res.status, 200);
    const t = await store.getTrajectory('served-1');
    assert.ok(t);
    assert.equal(t.turns.length, 2);
    assert.deepEqual(t.turns.map((turn) => turn.info.conversation), [0, 0]);
    const [first, second] = t.turns.map((turn) => turn.calls[0].completion);
    assert.deepEqual(first.completionTokenIds, plainIds);
    assert.deepEqual(first.promptTokenIds, (plain as unknown as WithPromptIds).prompt_token_ids);
    assert.deepEqual(first.logprobs, plainLogprobs);
    assert.equal(first.modelId, 'tiny');
    assert.equal(first.policyVersion, (plain as unknown as WithPromptIds).policy_version);
    assert.deepEqual(second.completionTokenIds, streamedIds);
    assert.deepEqual(second.promptTokenIds, streamedPromptIds);
    assert.deepEqual(second.logprobs, streamedLogprobs);
    assert.equal(second.text, text);
    assert.equal(t.turns[1].info.streamed, true);

    // Calls cut at max_tokens are kept here: the point is which tokens the samples hold.
    const { samples, stats } = buildSamples([t], [{ trajectoryId: t.id, groupId: t.groupId ?? t.id, turnAdvantages: [1, 1] }], { truncated: 'keep' });
    assert.equal(stats.trainedCalls, 2);
    const spans = samples.flatMap((s) => s.spans.map((span) => ({ ids: s.tokens.slice(span.start, span.end), logprobs: s.logprobs.slice(span.start, span.end) })));
    assert.deepEqual(spans.map((s) => s.ids), [plainIds, streamedIds]);
    assert.deepEqual(spans.map((s) => s.logprobs), [plainLogprobs, streamedLogprobs]);
  });
});

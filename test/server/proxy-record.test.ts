/**
 * `spindle proxy` as a real process in front of a loopback vLLM-shaped upstream
 * (fixtures/proxy-upstream.ts), driven with the `openai` client: naming by header and by URL,
 * groups by task id, token ids and logprobs as sampled, a streamed call, an upstream failure,
 * bad input, and /v1/models.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import type { Trajectory } from '../../src/core/trajectory.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { startProxyProcess, type ProxyProcess } from './fixtures/proxy-process.ts';
import { startToyUpstream, type ToyUpstream } from './fixtures/proxy-upstream.ts';

/** vLLM's extra request fields: token ids in the response, logprob tokens as `token_id:N`. */
const VLLM_IDS = { return_token_ids: true, logprobs: true, return_tokens_as_token_ids: true };

let upstream: ToyUpstream;
let proxy: ProxyProcess;
let store: Store;

async function reward(id: string, body: unknown): Promise<Response> {
  return fetch(`${proxy.url}/trajectories/${id}/reward`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function scored(id: string, value: number): Promise<Trajectory> {
  const res = await reward(id, { reward: value });
  assert.equal(res.status, 200, await res.clone().text());
  const t = await store.getTrajectory(id);
  assert.ok(t, `trajectory ${id} is stored`);
  return t;
}

function ask(content: string, extra: Record<string, unknown> = VLLM_IDS): ChatCompletionCreateParamsNonStreaming {
  return { model: 'toy', messages: [{ role: 'user', content }], ...extra } as ChatCompletionCreateParamsNonStreaming;
}

before(async () => {
  upstream = await startToyUpstream();
  proxy = await startProxyProcess(upstream.url, ['--body-limit', '4096']);
  store = await openStore(proxy.db);
});

after(async () => {
  await proxy?.stop();
  await store?.close();
  await upstream?.close();
});

describe('spindle proxy with the openai client', () => {
  it('names trajectories by header or URL, groups them by task, and records the ids and logprobs sampled', async () => {
    const byHeader = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'k', defaultHeaders: { 'x-spindle-trajectory': 'hdr-1', 'x-spindle-task': 'T1' } });
    const byPath = new OpenAI({ baseURL: `${proxy.url}/t/path-1/task/T1/v1`, apiKey: 'k' });
    const otherTask = new OpenAI({ baseURL: `${proxy.url}/t/path-2/task/T2/v1`, apiKey: 'k' });

    const before = upstream.sampled.length;
    const r1 = await byHeader.chat.completions.create(ask('hello one', { ...VLLM_IDS, temperature: 0.5, max_tokens: 16, top_k: -1, seed: 7, stop: 'END' }));
    const r2 = await byPath.chat.completions.create(ask('hello two'));
    const r3 = await otherTask.chat.completions.create(ask('hello three'));
    assert.equal(r1.choices[0].message.content, 'echo: hello one');
    assert.equal(r2.choices[0].message.content, 'echo: hello two');
    assert.equal(r3.choices[0].message.content, 'echo: hello three');

    const [t1, t2, t3] = [await scored('hdr-1', 1), await scored('path-1', 0), await scored('path-2', 0.5)];
    for (const [t, s] of [[t1, upstream.sampled[before]], [t2, upstream.sampled[before + 1]], [t3, upstream.sampled[before + 2]]] as const) {
      assert.equal(t.runId, proxy.runId);
      assert.equal(t.status, 'completed');
      assert.equal(t.turns.length, 1);
      const { completion, messages } = t.turns[0].calls[0];
      assert.deepEqual(completion.completionTokenIds, s.completionIds);
      assert.deepEqual(completion.promptTokenIds, s.promptIds);
      assert.deepEqual(completion.logprobs, s.logprobs);
      assert.equal(completion.tokenIdsExact, true);
      assert.equal(messages.at(-1)?.role, 'user');
      assert.equal(t.messages.at(-1)?.role, 'assistant');
    }
    // What each call asked its sampler for (top_k -1 is vLLM's "off"); unsaid settings are the upstream's.
    assert.deepEqual(t1.turns[0].calls[0].sampling, { temperature: 0.5, maxTokens: 16, seed: 7, stop: ['END'] });
    assert.deepEqual(t2.turns[0].calls[0].sampling, { temperature: null, maxTokens: null });
    assert.equal(t1.reward, 1);
    assert.equal(t1.groupId, `${proxy.runId}:T1`);
    assert.equal(t2.groupId, t1.groupId);
    assert.equal(t3.groupId, `${proxy.runId}:T2`);
    assert.deepEqual([t1.sample, t2.sample], [0, 1]);
    const group = await store.getGroup(`${proxy.runId}:T1`);
    assert.deepEqual(group?.trajectoryIds, ['hdr-1', 'path-1']);
  });

  it('records a streamed completion while passing its chunks through', async () => {
    const client = new OpenAI({ baseURL: `${proxy.url}/t/stream-1/v1`, apiKey: 'k' });
    const before = upstream.sampled.length;
    const stream = await client.chat.completions.create({
      model: 'toy',
      messages: [{ role: 'user', content: 'stream this please' }],
      stream: true,
      ...VLLM_IDS,
    } as ChatCompletionCreateParamsStreaming);
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.equal(text, 'echo: stream this please');
    assert.ok(chunks > 3, `the answer came in ${chunks} chunks`);
    const t = await scored('stream-1', 1);
    const s = upstream.sampled[before];
    assert.equal(s.streamed, true);
    const { completion } = t.turns[0].calls[0];
    assert.equal(completion.text, text);
    assert.deepEqual(completion.completionTokenIds, s.completionIds);
    assert.deepEqual(completion.promptTokenIds, s.promptIds);
    assert.deepEqual(completion.logprobs, s.logprobs);
    assert.equal(t.turns[0].info.streamed, true);
  });

  it('marks ids as missing or inexact when the upstream does not report them', async () => {
    const client = new OpenAI({ baseURL: `${proxy.url}/t/noids-1/v1`, apiKey: 'k' });
    await client.chat.completions.create(ask('plain', {}));
    // Logprob tokens as ids but no prompt ids: completion ids known, the call still not exact.
    await client.chat.completions.create({
      model: 'toy',
      messages: [{ role: 'user', content: 'plain' }, { role: 'assistant', content: 'echo: plain' }, { role: 'user', content: 'again' }],
      logprobs: true,
      return_tokens_as_token_ids: true,
    } as ChatCompletionCreateParamsNonStreaming);
    const t = await scored('noids-1', 0);
    const [first, second] = t.turns.map((turn) => turn.calls[0].completion);
    assert.equal(first.completionTokenIds, null);
    assert.equal(first.promptTokenIds, null);
    assert.equal(first.tokenIdsExact, false);
    assert.deepEqual(second.completionTokenIds, upstream.sampled.at(-1)?.completionIds);
    assert.equal(second.promptTokenIds, null);
    assert.equal(second.tokenIdsExact, false);
    // The second call extends the first conversation: one main conversation, two turns.
    assert.equal(t.additionalHistories.length, 0);
    assert.deepEqual(t.turns.map((turn) => turn.info.conversation), [0, 0]);
  });

  it("returns the upstream's error and records the failure on the trajectory", async () => {
    const client = new OpenAI({ baseURL: `${proxy.url}/t/fail-1/v1`, apiKey: 'k', maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ model: 'broken', messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.APIError);
      assert.equal(e.status, 503);
      assert.match(e.message, /the toy model is overloaded/);
      return true;
    });
    await client.chat.completions.create(ask('after the failure'));
    const t = await scored('fail-1', 0);
    assert.equal(t.turns.length, 2);
    assert.equal(t.turns[0].calls[0].completion.finishReason, 'error');
    assert.deepEqual(t.turns[0].info.upstreamError, { status: 503, message: 'the toy model is overloaded' });
    assert.equal(t.metrics.upstreamErrors, 1);
    assert.match(t.statusReason ?? '', /upstream error 503: the toy model is overloaded/);
  });

  it('keeps a call that does not extend the main conversation as an additional history', async () => {
    const client = new OpenAI({ baseURL: `${proxy.url}/t/branch-1/v1`, apiKey: 'k' });
    await client.chat.completions.create(ask('main question'));
    await client.chat.completions.create(ask('a sub-agent question'));
    await client.chat.completions.create({
      model: 'toy',
      messages: [
        { role: 'user', content: 'main question' },
        { role: 'assistant', content: 'echo: main question' },
        { role: 'user', content: 'follow-up' },
      ],
      ...VLLM_IDS,
    } as ChatCompletionCreateParamsNonStreaming);
    const t = await scored('branch-1', 1);
    assert.deepEqual(t.turns.map((turn) => turn.info.conversation), [0, 1, 0]);
    assert.deepEqual(t.messages.map((m) => m.content), ['main question', 'echo: main question', 'follow-up', 'echo: follow-up']);
    assert.deepEqual(t.additionalHistories.map((h) => h.map((m) => m.content)), [['a sub-agent question', 'echo: a sub-agent question']]);
  });

  it('answers bad input with OpenAI-style errors and keeps serving', async () => {
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const expectError = async (res: Response, status: number, pattern: RegExp) => {
      assert.equal(res.status, status);
      const body = (await res.json()) as { error: { message: string; type: string } };
      assert.match(body.error.message, pattern);
      assert.equal(typeof body.error.type, 'string');
    };
    await expectError(await post('/t/bad-1/v1/chat/completions', '{"model": "toy", "messages": ['), 400, /not valid JSON/);
    await expectError(await post('/t/bad-1/v1/chat/completions', JSON.stringify({ model: 'toy', messages: [{ role: 'user', content: 'x'.repeat(5000) }] })), 413, /over the 4096-byte limit/);
    await expectError(await post('/t/bad-1/v1/chat/completions', JSON.stringify({ model: 'toy' })), 400, /^messages: /);
    await expectError(await post('/t/bad-1/v1/chat/completions', JSON.stringify({ model: 7, messages: [{ role: 'user', content: 'x' }] })), 400, /^model: /);
    await expectError(await post('/t/bad-1/v1/chat/completions', JSON.stringify({ model: 'toy', messages: [{ role: 'user', content: 'x' }], temperature: 'hot' })), 400, /^temperature: /);
    await expectError(await post('/v1/chat/completions', JSON.stringify({ model: 'toy', messages: [{ role: 'user', content: 'x' }] })), 400, /x-spindle-trajectory/);
    await expectError(await post('/t/bad-1/v1/chat/completions', '{}', { 'x-spindle-trajectory': 'other' }), 400, /differ/);
    await expectError(await post('/t/bad%20id/v1/chat/completions', '{}'), 400, /trajectoryId: .* not a valid id/);
    await expectError(await reward('hdr-1', { reward: 'high' }), 400, /^reward: /);
    await expectError(await reward('hdr-1', { reward: 1, parts: { a: 'x' } }), 400, /^parts\.a: /);
    await expectError(await reward('never-seen', { reward: 1 }), 404, /no calls were recorded/);
    // Nothing was recorded for the refused calls, and the proxy still serves.
    assert.equal(await store.getTrajectory('bad-1'), null);
    const client = new OpenAI({ baseURL: `${proxy.url}/t/ok-after/v1`, apiKey: 'k' });
    const ok = await client.chat.completions.create(ask('still here'));
    assert.equal(ok.choices[0].message.content, 'echo: still here');
  });

  it('forwards /v1/models', async () => {
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'k' });
    const models = await client.models.list();
    assert.deepEqual(models.data.map((m) => m.id), ['toy']);
  });
});

describe('spindle proxy when a client disconnects mid-stream', () => {
  it('records the cut-off call as failed and keeps serving', async () => {
    const abort = new AbortController();
    const res = await fetch(`${proxy.url}/t/gone-1/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'a long answer, please' }], stream: true }),
      signal: abort.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    abort.abort();
    await assert.rejects(reader.read());
    // The proxy notices the close, stops reading the upstream and records the call.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const client = new OpenAI({ baseURL: `${proxy.url}/t/gone-1/v1`, apiKey: 'k' });
    const ok = await client.chat.completions.create(ask('still serving'));
    assert.equal(ok.choices[0].message.content, 'echo: still serving');
    const t = await scored('gone-1', 0);
    assert.equal(t.turns.length, 2);
    assert.equal(t.turns[0].calls[0].completion.finishReason, 'error');
    assert.deepEqual(t.turns[0].info.upstreamError, { status: null, message: 'the client disconnected mid-stream' });
    assert.equal(t.turns[1].calls[0].completion.finishReason, 'stop');
  });
});

describe('stopping spindle proxy', () => {
  it('stores the calls it answered last, unscored, and marks the run finished', async () => {
    const client = new OpenAI({ baseURL: `${proxy.url}/t/last-1/v1`, apiKey: 'k' });
    await client.chat.completions.create(ask('the last call'));
    const stopped = await proxy.stop();
    assert.equal(stopped?.event, 'stopped');
    const t = await store.getTrajectory('last-1');
    assert.equal(t?.status, 'failed');
    assert.equal(t?.statusReason, 'awaiting reward');
    assert.equal(t?.turns.length, 1);
    const run = await store.getRun(proxy.runId);
    assert.equal(run?.kind, 'proxy');
    assert.equal(run?.status, 'finished');
  });
});

describe('spindle proxy with an upstream that is down', () => {
  it('answers 502 with an OpenAI-style error and records the failure', async () => {
    // A port that was just free: nothing listens there.
    const down = await startToyUpstream();
    await down.close();
    const lone = await startProxyProcess(down.url);
    try {
      const client = new OpenAI({ baseURL: `${lone.url}/t/down-1/v1`, apiKey: 'k', maxRetries: 0 });
      await assert.rejects(client.chat.completions.create(ask('anyone there?')), (e: unknown) => {
        assert.ok(e instanceof OpenAI.APIError);
        assert.equal(e.status, 502);
        assert.match(e.message, /upstream unreachable/);
        return true;
      });
    } finally {
      await lone.stop();
    }
    const db = await openStore(lone.db);
    try {
      const t = await db.getTrajectory('down-1');
      assert.equal(t?.turns[0].calls[0].completion.finishReason, 'error');
      assert.match(t?.statusReason ?? '', /^awaiting reward; upstream error: upstream unreachable/);
    } finally {
      await db.close();
    }
  });
});

/**
 * `spindle serve` streaming token by token and `top_logprobs`, as a real process driven by the `openai`
 * client: streamed chunks add up to the non-streamed answer (text, token ids, logprobs), the first
 * chunk carries the prompt ids, n > 1 streams each choice under its index, top_logprobs match an
 * independent forward of the checkpoint, bad values are 400s, and a client that leaves mid-stream
 * does not disturb a stream decoded in the same batch.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { initEngine } from '../../src/model/engine.ts';
import { loadedHostParams, logitsOf } from '../eval/tiny-checkpoint.ts';
import { startServe, tinyCheckpointDir, type ServeProcess } from './serve-process.ts';

const MODEL = 'tiny';
const messages = [{ role: 'user' as const, content: 'Your hand: 10, 6. Dealer shows 9. hit or stick?' }];
/** vLLM's extension, passed through by the openai client as a body field. */
const vllm = { return_token_ids: true } as Record<string, unknown>;

type Extra = { token_ids?: number[] };
type Chunk = OpenAI.ChatCompletionChunk & { prompt_token_ids?: number[] };
type Received = { chunk: Chunk; at: number };

let server: ServeProcess;
let client: OpenAI;
let dir: string;

async function collect(params: Record<string, unknown>): Promise<Received[]> {
  const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true, ...vllm, ...params } as OpenAI.ChatCompletionCreateParamsStreaming);
  const out: Received[] = [];
  for await (const chunk of stream) out.push({ chunk: chunk as Chunk, at: performance.now() });
  return out;
}

/** The choice `index`'s content pieces, token ids and logprob entries, in order. */
function choiceOf(received: Received[], index: number) {
  const choices = received.flatMap((r) => r.chunk.choices.filter((c) => c.index === index));
  return {
    pieces: choices.map((c) => c.delta.content ?? '').filter((p) => p.length > 0),
    ids: choices.flatMap((c) => (c as Extra).token_ids ?? []),
    logprobs: choices.flatMap((c) => c.logprobs?.content ?? []),
    finish: choices.map((c) => c.finish_reason).filter((f) => f !== null).at(-1),
  };
}

describe('spindle serve streaming and top_logprobs (real process)', () => {
  before(async () => {
    dir = tinyCheckpointDir(5);
    server = await startServe(['--model', dir]);
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
  });
  after(async () => {
    await server?.stop();
  });

  it('streams a greedy answer token by token that adds up to the non-streamed one', async () => {
    const ask = { max_tokens: 48, temperature: 0, seed: 4, logprobs: true, top_logprobs: 3 };
    const whole = await client.chat.completions.create({ model: MODEL, messages, ...vllm, ...ask });
    const received = await collect(ask);
    const expectedIds = (whole.choices[0] as Extra).token_ids!;
    const streamed = choiceOf(received, 0);
    assert.deepEqual(received[0].chunk.prompt_token_ids, (whole as unknown as { prompt_token_ids: number[] }).prompt_token_ids, 'the first chunk has the prompt ids');
    assert.ok(received.slice(1).every((r) => r.chunk.prompt_token_ids === undefined));
    assert.ok(streamed.pieces.length > 1, `${streamed.pieces.length} content chunks`);
    assert.equal(streamed.pieces.join(''), whole.choices[0].message.content);
    assert.deepEqual(streamed.ids, expectedIds);
    assert.equal(streamed.finish, whole.choices[0].finish_reason);
    // One token per chunk, each with its own logprob entry and the same alternatives as the whole answer.
    const tokenChunks = received.filter((r) => ((r.chunk.choices[0] as Extra | undefined)?.token_ids ?? []).length > 0);
    assert.equal(tokenChunks.length, expectedIds.length);
    assert.deepEqual(streamed.logprobs, whole.choices[0].logprobs!.content);
    // Chunks leave as tokens are decoded, not all at once after sampling: they are spread over time.
    assert.ok(expectedIds.length >= 16, `${expectedIds.length} tokens`);
    const spread = tokenChunks.at(-1)!.at - tokenChunks[0].at;
    assert.ok(spread > 5, `token chunks arrived within ${spread.toFixed(2)} ms`);
  });

  it('streams each of n choices under its index', async () => {
    const ask = { max_tokens: 10, n: 3, temperature: 1.3, seed: 8 };
    const whole = await client.chat.completions.create({ model: MODEL, messages, ...vllm, ...ask });
    const received = await collect(ask);
    for (const choice of whole.choices) {
      const streamed = choiceOf(received, choice.index);
      assert.deepEqual(streamed.ids, (choice as Extra).token_ids, `choice ${choice.index}`);
      assert.equal(streamed.pieces.join(''), choice.message.content, `choice ${choice.index}`);
    }
    assert.deepEqual([...new Set(received.flatMap((r) => r.chunk.choices.map((c) => c.index)))].sort(), [0, 1, 2]);
  });

  it('returns top_logprobs from the untempered model, sorted, with the greedy token first', async () => {
    const k = 5;
    const data = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 6, temperature: 0, logprobs: true, top_logprobs: k, ...vllm });
    const choice = data.choices[0];
    const ids = (choice as Extra).token_ids!;
    const promptIds = (data as unknown as { prompt_token_ids: number[] }).prompt_token_ids;
    // An independent full forward of the checkpoint over prompt + answer.
    await initEngine({ threads: 1 });
    const { cfg, host } = loadedHostParams(dir);
    const logits = await logitsOf(cfg, host, [...promptIds, ...ids]);
    const V = cfg.vocabSize;
    choice.logprobs!.content!.forEach((entry, i) => {
      const top = entry.top_logprobs;
      assert.equal(top.length, k);
      for (let j = 1; j < k; j++) assert.ok(top[j - 1].logprob >= top[j].logprob, `token ${i}: sorted descending`);
      assert.ok(top.reduce((sum, t) => sum + Math.exp(t.logprob), 0) <= 1 + 1e-6);
      assert.equal(top[0].token, entry.token, 'greedy: the chosen token is the most likely');
      const row = logits.subarray((promptIds.length - 1 + i) * V, (promptIds.length + i) * V);
      const max = Math.max(...row);
      const lse = max + Math.log(row.reduce((sum, l) => sum + Math.exp(l - max), 0));
      const expected = [...row].map((l) => l - lse).sort((a, b) => b - a).slice(0, k);
      assert.ok(Math.abs(top[0].logprob - (row[ids[i]] - lse)) < 1e-5, `token ${i}: ${top[0].logprob} vs ${row[ids[i]] - lse}`);
      top.forEach((t, j) => assert.ok(Math.abs(t.logprob - expected[j]) < 1e-5, `token ${i} alternative ${j}: ${t.logprob} vs ${expected[j]}`));
    });
  });

  it("gives at temperature 1 the sampled token's logprob among its alternatives", async () => {
    // Tokens written `token_id:N`: distinct ids that decode to the same text are told apart.
    const data = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 16, n: 4, temperature: 1, seed: 2, logprobs: true, top_logprobs: 20, return_tokens_as_token_ids: true } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    let found = 0;
    for (const entry of data.choices.flatMap((c) => c.logprobs!.content!)) {
      const same = entry.top_logprobs.find((t) => t.token === entry.token);
      if (!same) continue;
      found++;
      // At temperature 1 the sampling distribution is the model's: the two logprobs agree.
      assert.ok(Math.abs(same.logprob - entry.logprob) < 1e-5, `${same.logprob} vs ${entry.logprob}`);
    }
    assert.ok(found >= 1, 'some sampled tokens are among the 20 most likely');
  });

  it('rejects a bad top_logprobs with a 400 naming the field', async () => {
    const post = (extra: object) =>
      fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages, max_tokens: 2, ...extra }) });
    for (const extra of [{ logprobs: true, top_logprobs: 21 }, { logprobs: true, top_logprobs: -1 }, { logprobs: true, top_logprobs: 1.5 }, { logprobs: true, top_logprobs: 'three' }, { top_logprobs: 3 }, { logprobs: false, top_logprobs: 2 }]) {
      const r = await post(extra);
      assert.equal(r.status, 400, JSON.stringify(extra));
      const body = (await r.json()) as { error: { param: string; type: string; message: string } };
      assert.equal(body.error.param, 'top_logprobs', JSON.stringify(extra));
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /top_logprobs/);
    }
    await assert.rejects(client.chat.completions.create({ model: MODEL, messages, top_logprobs: 3 }), (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === 'top_logprobs');
  });

  it('keeps streaming to one client while another in the same batch disconnects', async () => {
    const ask = { max_tokens: 64, temperature: 0, seed: 1 };
    const expected = await client.chat.completions.create({ model: MODEL, messages, ...vllm, ...ask });
    const leaving = new AbortController();
    const gone = fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages, max_tokens: 500, stream: true }),
      signal: leaving.signal,
    }).then(async (r) => {
      // Read until the first token arrives, then hang up.
      const reader = r.body!.getReader();
      let text = '';
      while (!text.includes('"content":"') || text.split('data:').length < 4) text += new TextDecoder().decode((await reader.read()).value);
      leaving.abort();
    });
    const staying = collect(ask); // submitted in the same turn: decoded in the same batch
    const [received] = await Promise.all([staying, gone.catch(() => undefined)]);
    assert.deepEqual(choiceOf(received, 0).ids, (expected.choices[0] as Extra).token_ids);
    const after = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 2 });
    assert.equal(after.choices.length, 1);
  });
});

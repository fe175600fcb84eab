/**
 * `spindle serve` as a real process on a loopback port, driven by the official `openai` client:
 * completions with logprobs and vLLM-style token ids, streaming, n > 1, tools in the prompt, error
 * bodies, and the remote `openai:MODEL` policy playing blackjack against it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, streamText } from 'ai';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { loadCheckpoint } from '../../src/model/checkpoint.ts';
import '../../src/policy/openai-register.ts';
import { OpenAIPolicy } from '../../src/policy/openai.ts';
import { resolvePolicy } from '../../src/policy/resolve.ts';
import { runRollouts } from '../../src/rollout/rollouts.ts';
import { runCli, scratchDir } from '../cli/run-cli.ts';
import { startServe, tinyCheckpointDir, type ServeProcess } from './serve-process.ts';

const BODY_LIMIT = 65_536;
let server: ServeProcess;
let client: OpenAI;
let dir: string;
const MODEL = 'tiny';
const messages = [{ role: 'user' as const, content: 'Your hand: 10, 6. Dealer shows 9. hit or stick?' }];
/** vLLM's request extensions, which the openai client passes through as body fields. */
const vllm = { return_token_ids: true } as Record<string, unknown>;

type TokenIdsChoice = { token_ids?: number[] };

describe('spindle serve (real process)', () => {
  before(async () => {
    dir = tinyCheckpointDir();
    server = await startServe(['--model', dir, '--body-limit', String(BODY_LIMIT)]);
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
  });
  after(async () => {
    await server?.stop();
  });

  it('lists its model', async () => {
    const models = await client.models.list();
    assert.deepEqual(models.data.map((m) => m.id), [MODEL]);
  });

  it('answers a completion with logprobs, token ids and the policy version', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: MODEL, messages, max_tokens: 6, temperature: 1, seed: 7, logprobs: true, ...vllm })
      .withResponse();
    assert.equal(response.headers.get('x-spindle-policy-version'), '0');
    assert.equal((data as unknown as { policy_version: number }).policy_version, 0);
    const choice = data.choices[0];
    const ids = (choice as TokenIdsChoice).token_ids!;
    const promptIds = (data as unknown as { prompt_token_ids: number[] }).prompt_token_ids;
    assert.ok(ids.length >= 1 && ids.length <= 6);
    assert.equal(choice.logprobs!.content!.length, ids.length);
    for (const entry of choice.logprobs!.content!) assert.ok(entry.logprob < 0 && Number.isFinite(entry.logprob));
    assert.equal(data.usage!.completion_tokens, ids.length);
    assert.equal(data.usage!.prompt_tokens, promptIds.length);
    // The prompt ids are the checkpoint's chat template rendered and encoded.
    const ckpt = loadCheckpoint(dir);
    const expected = ckpt.tokenizer.encode(ckpt.chatTemplate.render(messages, { tools: [], addGenerationPrompt: true }), { addSpecialTokens: false });
    assert.deepEqual(promptIds, expected);
    assert.equal(choice.message.content, ckpt.tokenizer.decode(ids, { skipSpecialTokens: true }));
    assert.equal(choice.finish_reason, ids.length === 6 && !ckpt.stopTokenIds.includes(ids[5]) ? 'length' : 'stop');
    // Same seed, same sample.
    const again = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 6, temperature: 1, seed: 7, ...vllm });
    assert.deepEqual((again.choices[0] as TokenIdsChoice).token_ids, ids);
  });

  it('writes logprob tokens as token_id:N with return_tokens_as_token_ids', async () => {
    const data = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 4, seed: 3, logprobs: true, return_tokens_as_token_ids: true } as never);
    const choice = (data as OpenAI.ChatCompletion).choices[0];
    const ids = (choice as TokenIdsChoice).token_ids!;
    assert.deepEqual(choice.logprobs!.content!.map((c) => c.token), ids.map((id) => `token_id:${id}`));
  });

  it('streams the same answer as SSE chunks', async () => {
    const whole = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 8, seed: 11, logprobs: true, ...vllm });
    const stream = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 8, seed: 11, logprobs: true, stream: true, stream_options: { include_usage: true }, ...vllm });
    let text = '';
    const ids: number[] = [];
    let finish: string | null = null;
    let chunks = 0;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.usage) usage = chunk.usage;
      const c = chunk.choices[0];
      if (!c) continue;
      text += c.delta.content ?? '';
      ids.push(...((c as TokenIdsChoice).token_ids ?? []));
      finish = c.finish_reason ?? finish;
    }
    const expectedIds = (whole.choices[0] as TokenIdsChoice).token_ids!;
    assert.equal(text, whole.choices[0].message.content);
    assert.deepEqual(ids, expectedIds);
    assert.equal(finish, whole.choices[0].finish_reason);
    assert.ok(chunks >= expectedIds.length + 2, `${chunks} chunks for ${expectedIds.length} tokens`);
    assert.equal(usage?.completion_tokens, expectedIds.length);
  });

  it('samples n choices of one prompt', async () => {
    const data = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 6, n: 3, seed: 5, temperature: 1.5, ...vllm });
    assert.equal(data.choices.length, 3);
    assert.deepEqual(data.choices.map((c) => c.index), [0, 1, 2]);
    const seqs = data.choices.map((c) => JSON.stringify((c as TokenIdsChoice).token_ids));
    assert.ok(new Set(seqs).size > 1, 'three samples at temperature 1.5 should not all be equal');
    assert.equal(data.usage!.completion_tokens, data.choices.reduce((s, c) => s + (c as TokenIdsChoice).token_ids!.length, 0));
  });

  it('renders offered tools into the prompt and accepts a tool-call history', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'stick', description: 'Stop drawing cards', parameters: { type: 'object', properties: {} } } }];
    const plain = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 2, ...vllm });
    const history: OpenAI.ChatCompletionMessageParam[] = [
      ...messages,
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'stick', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_0', content: 'Dealer busts. You win.' },
    ];
    const withTools = await client.chat.completions.create({ model: MODEL, messages: history, tools, max_tokens: 2, ...vllm });
    const promptOf = (r: OpenAI.ChatCompletion) => (r as unknown as { prompt_token_ids: number[] }).prompt_token_ids;
    const ckpt = loadCheckpoint(dir);
    const rendered = ckpt.tokenizer.decode(promptOf(withTools));
    assert.ok(promptOf(withTools).length > promptOf(plain).length);
    assert.ok(rendered.includes('Stop drawing cards'), 'the tool description is in the prompt');
    assert.ok(rendered.includes('Dealer busts'), 'the tool result is in the prompt');
  });

  it('answers bad requests with OpenAI error bodies and keeps serving', async () => {
    const post = (body: string) => fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const cases: [string, string, number, string | null, string | null][] = [
      ['malformed JSON', '{"model": "tiny", "messages": [', 400, 'invalid_json', null],
      ['missing messages', JSON.stringify({ model: MODEL }), 400, 'invalid_type', 'messages'],
      ['wrong-typed n', JSON.stringify({ model: MODEL, messages, n: 'two' }), 400, 'invalid_type', 'n'],
      ['unknown model', JSON.stringify({ model: 'gpt-9', messages }), 404, 'model_not_found', 'model'],
      ['prompt longer than the context', JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hit or stick? '.repeat(600) }] }), 400, 'context_length_exceeded', 'messages'],
      ['body over the size limit', JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x'.repeat(BODY_LIMIT) }] }), 413, 'request_too_large', null],
    ];
    for (const [label, body, status, code, param] of cases) {
      const r = await post(body);
      assert.equal(r.status, status, label);
      const json = (await r.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
      assert.equal(json.error.code, code, label);
      assert.equal(json.error.param, param, label);
      assert.equal(typeof json.error.message, 'string', label);
      assert.ok(json.error.type.length > 0, label);
    }
    // Through the client: a typed error with the status.
    await assert.rejects(client.chat.completions.create({ model: 'gpt-9', messages }), (e: unknown) => e instanceof OpenAI.NotFoundError);
    // A client that goes away mid-request, then the server still answers the next one.
    const controller = new AbortController();
    const gone = fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages, max_tokens: 200, stream: true }),
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 5);
    // Either the request or the reading of its stream is cut off.
    await gone.then((r) => r.text()).catch(() => undefined);
    const ok = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 2 });
    assert.equal(ok.choices.length, 1);
  });

  it('plays blackjack as --policy openai:MODEL, recording the token ids the server sampled', async () => {
    const options = blackjackSpec.options.parse({});
    const policy = await resolvePolicy(`openai:${MODEL}`, { spec: blackjackSpec, options, baseUrl: `${server.url}/v1` });
    assert.ok(policy instanceof OpenAIPolicy);
    assert.equal(policy.contextLength, 1024, 'the context window as /v1/models lists it');
    const { trajectories } = await runRollouts({ spec: blackjackSpec, options, policy, count: 3, baseSeed: 0, concurrency: 3, episode: { maxTokens: 8, maxTurns: 2 } });
    const ckpt = loadCheckpoint(dir);
    let calls = 0;
    for (const t of trajectories) {
      assert.deepEqual(t.policyVersions.every((v) => v === 0), true);
      for (const turn of t.turns) {
        for (const call of turn.calls) {
          calls++;
          const c = call.completion;
          assert.equal(c.tokenIdsExact, true);
          assert.equal(c.modelId, MODEL);
          assert.equal(c.policyVersion, 0);
          assert.ok(c.completionTokenIds && c.completionTokenIds.length >= 1);
          assert.equal(c.logprobs!.length, c.completionTokenIds.length);
          // The ids are the server's: they decode to the text, and the prompt is the template's rendering
          // (tools are already in the agent's system prompt, so none are sent to the server).
          assert.equal(ckpt.tokenizer.decode(c.completionTokenIds, { skipSpecialTokens: true }), c.text);
          const prompt = ckpt.tokenizer.encode(ckpt.chatTemplate.render(call.messages, { tools: [], addGenerationPrompt: true }), { addSpecialTokens: false });
          assert.deepEqual(c.promptTokenIds, prompt);
        }
      }
    }
    assert.ok(calls >= 3);
    const stats = (policy as OpenAIPolicy).stats;
    assert.equal(stats.calls, calls);
    assert.equal(stats.failedCalls, 0);
    assert.equal(stats.inexactCompletions, 0);
    assert.equal(stats.latenciesMs.length, calls);
    assert.ok(stats.completionTokens >= calls);
  });

  it('plays through `spindle play --policy openai:MODEL --base-url URL`', () => {
    delete process.env.OPENAI_BASE_URL; // the missing-URL case below must not find one
    const cwd = scratchDir();
    const r = runCli(['play', '--env', 'blackjack', '--policy', `openai:${MODEL}`, '--base-url', `${server.url}/v1`, '--episodes', '2', '--max-tokens', '4', '--max-turns', '2', '--json'], cwd);
    assert.equal(r.code, 0, r.stderr);
    const report = r.json();
    assert.equal(report.policy, `openai:${MODEL}`);
    assert.equal(report.episodes, 2);
    assert.equal(report.failed, 0);
    const missing = runCli(['play', '--env', 'blackjack', '--policy', `openai:${MODEL}`, '--episodes', '1'], cwd);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--base-url/);
  });

  it('answers the Vercel AI SDK (generateText and streamText)', async () => {
    const provider = createOpenAICompatible({ name: 'spindle', baseURL: `${server.url}/v1` });
    const whole = await generateText({ model: provider(MODEL), prompt: 'hit or stick?', maxOutputTokens: 6, temperature: 1, seed: 2 });
    assert.ok(whole.usage.outputTokens !== undefined && whole.usage.outputTokens >= 1 && whole.usage.outputTokens <= 6);
    const streamed = streamText({ model: provider(MODEL), prompt: 'hit or stick?', maxOutputTokens: 6, temperature: 1, seed: 2 });
    assert.equal(await streamed.text, whole.text);
  });
});

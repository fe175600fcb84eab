/**
 * The SSE writer of `spindle serve` on a real HTTP server, read by the `openai` client: a tool-call
 * answer streams its text up to `<tool_call>` and then the call as one `tool_calls` delta; the first
 * chunk alone carries the prompt ids; usage comes last; the policy version is in the header and chunks.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { Completion } from '../../src/core/completion.ts';
import { tokenizerFromJson } from '../../src/model/tokenizer/tokenizer.ts';
import type { ResponseSettings } from '../../src/server/chat-response.ts';
import { ChatStream } from '../../src/server/chat-stream.ts';
import { blackjackTokenizer } from '../eval/tiny-checkpoint.ts';

const files = blackjackTokenizer();
const tokenizer = tokenizerFromJson(files.tokenizerJson, files.tokenizerConfig);
const tools = [{ name: 'stick', description: 'stop', parameters: { type: 'object', properties: {} } }];
const text = 'I stick.<tool_call>{"name": "stick", "arguments": {}}</tool_call>';
const ids = tokenizer.encode(text, { addSpecialTokens: false });
const completion: Completion = { text, promptTokenIds: [1, 2, 3], completionTokenIds: ids, logprobs: ids.map(() => -1), tokenIdsExact: true, finishReason: 'stop', modelId: 'tiny', policyVersion: 7 };
const settings: ResponseSettings = { id: 'c1', created: 0, model: 'tiny', tools, logprobs: true, tokensAsIds: false, tokenIds: true, tokenizer };

let server: Server;
let client: OpenAI;

describe('ChatStream', () => {
  before(async () => {
    // Writes the answer token by token, as app.ts does from the sampler's callbacks.
    server = createServer((_request, response) => {
      const stream = new ChatStream(response, settings, { n: 1, promptIds: [1, 2, 3], includeUsage: true, stop: [] });
      stream.start(7);
      for (const id of ids) stream.token(0, { id, logprob: -1, modelLogprob: -1, top: null });
      stream.end([completion]);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new OpenAI({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'none', maxRetries: 0 });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('streams text up to the tool call, then the call as one delta', async () => {
    const { data: stream, response } = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], stream: true }).withResponse();
    assert.equal(response.headers.get('x-spindle-policy-version'), '7');
    const chunks: (OpenAI.ChatCompletionChunk & { prompt_token_ids?: number[]; policy_version?: number })[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.deepEqual(chunks[0].prompt_token_ids, [1, 2, 3]);
    assert.ok(chunks.slice(1).every((c) => c.prompt_token_ids === undefined));
    assert.ok(chunks.every((c) => c.policy_version === 7));
    const deltas = chunks.flatMap((c) => c.choices.map((ch) => ch.delta));
    assert.equal(deltas.map((d) => d.content ?? '').join(''), 'I stick.');
    const calls = deltas.flatMap((d) => d.tool_calls ?? []);
    assert.deepEqual(calls.map((t) => [t.index, t.function?.name, t.function?.arguments]), [[0, 'stick', '{}']]);
    assert.deepEqual(chunks.flatMap((c) => c.choices.flatMap((ch) => (ch as { token_ids?: number[] }).token_ids ?? [])), ids);
    assert.equal(chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter((f) => f !== null).join(), 'tool_calls');
    assert.equal(chunks.at(-1)!.usage?.completion_tokens, ids.length);
  });
});

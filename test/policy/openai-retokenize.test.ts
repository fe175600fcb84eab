/**
 * `--tokenizer DIR` with the remote policy: against a loopback OpenAI-compatible server that reports no
 * token ids, the ids are the real Qwen3 tokenizer's encoding of its chat template's render (prompt with
 * the generation prompt; the answer as the template writes it, through <|im_end|>), marked approximate and counted; logprobs stay
 * paired with ids only when the counts agree. With vLLM's id fields present, the ids are the server's,
 * exact and not counted. Then `spindle play --tokenizer DIR` as a real process stores such ids.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Message, ToolSpec } from '../../src/core/messages.ts';
import { OpenAIPolicy } from '../../src/policy/openai.ts';
import { loadRetokenizerAssets, type RetokenizerAssets } from '../../src/policy/openai-retokenize.ts';
import { resolvePolicy } from '../../src/policy/resolve.ts';
import '../../src/policy/openai-register.ts';
import { builtinEnvs } from '../../src/envs/builtin.ts';
import { openStore } from '../../src/store/open.ts';
import { BIN, scratchDir } from '../cli/run-cli.ts';
import { QWEN3_TOKENIZER_DIR } from '../model/tokenizer-fixtures.ts';

const tool: ToolSpec = { name: 'hit', description: 'take a card', parameters: { type: 'object', properties: {} } };
const messages: Message[] = [
  { role: 'system', content: 'Play blackjack.' },
  { role: 'user', content: 'Your hand: 12. Dealer shows 10.' },
];

function choice(content: string, logprobCount: number, extra: Record<string, unknown> = {}) {
  const tokens = Array.from({ length: logprobCount }, (_, i) => ({ token: `t${i}`, logprob: -0.1 * (i + 1), bytes: null, top_logprobs: [] }));
  return { index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: { content: tokens }, ...extra };
}

describe('openai policy re-tokenisation', () => {
  let server: Server;
  let baseURL: string;
  let next: Record<string, unknown> = {};
  let assets: RetokenizerAssets;

  before(async () => {
    assets = loadRetokenizerAssets(QWEN3_TOKENIZER_DIR);
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: 'served', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, ...next }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const request = (tools: ToolSpec[] = []) => ({ messages, tools, maxTokens: 50, temperature: 1 });
  const answer = 'I will hit.\n<tool_call>{"name": "hit", "arguments": {}}</tool_call>';
  // Qwen3's template writes the latest assistant turn with an (empty) think block before the content.
  const THINK = '<think>\n\n</think>\n\n';
  const expectedCompletion = () => assets.tokenizer.encode(`${THINK}${answer}<|im_end|>`);

  it('fills ids from the tokenizer when the server gives none, marks them approximate and counts them', async () => {
    const completionIds = expectedCompletion();
    next = { choices: [choice(answer, completionIds.length)] };
    const policy = new OpenAIPolicy({ model: 'm', baseURL, tokenizer: assets, serverTools: true });
    const [c] = await policy.complete(request([tool]));
    const promptText = assets.chatTemplate.render(messages, { tools: [tool], addGenerationPrompt: true });
    assert.ok(promptText.includes('"name": "hit"') && promptText.endsWith('<|im_start|>assistant\n'), 'the tools and the generation prompt are rendered');
    assert.deepEqual(c.promptTokenIds, assets.tokenizer.encode(promptText));
    assert.deepEqual(c.completionTokenIds, completionIds);
    assert.equal(c.completionTokenIds?.at(-1), assets.tokenizer.tokenToId('<|im_end|>'), 'through the end-of-turn token');
    assert.equal(c.tokenIdsExact, false);
    assert.equal(c.logprobs?.length, completionIds.length, 'equal counts: the logprobs stay paired with the ids');
    assert.equal(c.unalignedLogprobs, undefined);
    assert.equal(policy.stats.inexactCompletions, 1);
    assert.equal(policy.stats.approximateCompletions, 1);
    assert.equal(policy.stats.unalignedLogprobs, 0);
  });

  it('renders without tools the server was not sent, and keeps logprobs of another length apart from the ids', async () => {
    next = { choices: [choice(answer, 3)] };
    const policy = new OpenAIPolicy({ model: 'm', baseURL, tokenizer: assets });
    const [c] = await policy.complete(request([tool]));
    assert.deepEqual(c.promptTokenIds, assets.tokenizer.encode(assets.chatTemplate.render(messages, { addGenerationPrompt: true })));
    assert.deepEqual(c.completionTokenIds, expectedCompletion());
    assert.equal(c.logprobs, null, 'no logprob is paired with a re-tokenised id');
    assert.deepEqual(c.unalignedLogprobs, [-0.1, -0.2, -0.30000000000000004]);
    assert.equal(policy.stats.approximateCompletions, 1);
    assert.equal(policy.stats.unalignedLogprobs, 1);
  });

  it('leaves out the end-of-turn token of an answer cut at max tokens', async () => {
    next = { choices: [{ ...choice('I will', 2), finish_reason: 'length' }] };
    const policy = new OpenAIPolicy({ model: 'm', baseURL, tokenizer: assets });
    const [c] = await policy.complete(request());
    assert.deepEqual(c.completionTokenIds, assets.tokenizer.encode(`${THINK}I will`));
    assert.equal(c.finishReason, 'length');
  });

  it('uses the server ids when it reports them: exact, not counted', async () => {
    next = { prompt_token_ids: [1, 2, 3], choices: [choice('ok', 2, { token_ids: [7, 8] })] };
    const policy = new OpenAIPolicy({ model: 'm', baseURL, tokenizer: assets });
    const [c] = await policy.complete(request());
    assert.deepEqual(c.promptTokenIds, [1, 2, 3]);
    assert.deepEqual(c.completionTokenIds, [7, 8]);
    assert.equal(c.tokenIdsExact, true);
    assert.deepEqual(c.logprobs, [-0.1, -0.2]);
    assert.equal(policy.stats.inexactCompletions, 0);
    assert.equal(policy.stats.approximateCompletions, 0);
  });

  it('without a tokenizer, ids stay null (counted inexact, not approximate)', async () => {
    next = { choices: [choice(answer, 3)] };
    const policy = new OpenAIPolicy({ model: 'm', baseURL });
    const [c] = await policy.complete(request());
    assert.equal(c.completionTokenIds, null);
    assert.equal(policy.stats.inexactCompletions, 1);
    assert.equal(policy.stats.approximateCompletions, 0);
  });

  it('--tokenizer reaches the policy through the resolver, and a bad folder is refused naming the flag', async () => {
    const spec = builtinEnvs[0];
    next = { choices: [choice('hi', 1)] };
    const policy = await resolvePolicy('openai:m', { spec, options: {}, baseUrl: baseURL, tokenizer: QWEN3_TOKENIZER_DIR });
    const [c] = await policy.complete(request());
    assert.deepEqual(c.completionTokenIds, assets.tokenizer.encode(`${THINK}hi<|im_end|>`));
    await assert.rejects(resolvePolicy('openai:m', { spec, options: {}, baseUrl: baseURL, tokenizer: '/nonexistent-dir' }), /--tokenizer: folder not found/);
  });
});

describe('spindle play --policy openai:MODEL --tokenizer DIR', () => {
  it('stores approximate ids for every call of a server that reports none', async () => {
    const assets = loadRetokenizerAssets(QWEN3_TOKENIZER_DIR);
    const content = '<tool_call>{"name": "stick", "arguments": {}}</tool_call>';
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        if (req.method !== 'POST') return res.end(JSON.stringify({ object: 'list', data: [] }));
        res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: 'served', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const dir = scratchDir();
    const db = join(dir, 'db.sqlite');
    try {
      const args = [BIN, 'play', '--env', 'blackjack', '--policy', 'openai:m', '--base-url', url, '--tokenizer', QWEN3_TOKENIZER_DIR, '--episodes', '2', '--json', '--db', db];
      const code = await new Promise<number | null>((resolve) => spawn(process.execPath, args, { cwd: dir, stdio: 'ignore' }).once('close', resolve));
      assert.equal(code, 0);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    const store = await openStore(db);
    try {
      const [run] = await store.listRuns();
      const { items } = await store.listTrajectories(run.id);
      assert.equal(items.length, 2);
      for (const t of items) {
        const { completion, messages } = t.turns[0].calls[0];
        assert.equal(completion.tokenIdsExact, false);
        assert.deepEqual(completion.promptTokenIds, assets.tokenizer.encode(assets.chatTemplate.render(messages, { addGenerationPrompt: true })));
        assert.deepEqual(completion.completionTokenIds, assets.tokenizer.encode(`<think>\n\n</think>\n\n${content}<|im_end|>`));
      }
    } finally {
      await store.close();
    }
  });
});

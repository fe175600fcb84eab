/** The embedded model as a Policy: `model:DIR` from a checkpoint folder, exact token records, batching of concurrent calls. */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Message, ToolSpec } from '../../src/core/messages.ts';
import { loadCheckpoint, saveCheckpoint } from '../../src/model/checkpoint.ts';
import { parseModelConfig } from '../../src/model/config.ts';
import { initEngine, tree } from '../../src/model/engine.ts';
import { sequenceLogprobs } from '../../src/model/logprobs.ts';
import { toParams } from '../../src/model/params.ts';
import { EmbeddedPolicy } from '../../src/policy/embedded.ts';
import { loadEmbeddedPolicy } from '../../src/policy/embedded-load.ts';
import '../../src/policy/embedded-register.ts';
import { resolvePolicy, type PolicyContext } from '../../src/policy/resolve.ts';
import { tinyCheckpoint } from './checkpoint-fixtures.ts';
import { maxAbsDiff } from './sampler-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

let dir = '';

before(async () => {
  await initEngine({ threads: 1 });
  dir = tempDir('spindle-embedded-');
  // Stronger weights than the fixture's init scale, so distributions are peaked and varied.
  const input = tinyCheckpoint({ max_position_embeddings: 1024 });
  for (const t of Object.values(input.tensors)) t.data = t.data.map((x) => x * 15);
  saveCheckpoint(dir, input);
});

const tools: ToolSpec[] = [{ name: 'act', description: 'Hit or stick.', parameters: { type: 'object', properties: { move: { type: 'string' } } } }];
const messages = (hand: number): Message[] => [
  { role: 'system', content: 'You play blackjack.' },
  { role: 'user', content: `Your hand: ${hand}. Dealer shows 10. Hit or stick?` },
];

test('model:DIR completions record the rendered prompt ids, the sampled ids and both logprobs', async () => {
  const policy = await loadEmbeddedPolicy(dir, { seed: 1 });
  const checkpoint = loadCheckpoint(dir);
  const cfg = parseModelConfig(checkpoint.configJson);
  assert.equal(policy.name, `model:${dir}`);
  assert.equal(policy.contextLength, 1024);

  const completions = await policy.complete({ messages: messages(12), tools, n: 3, maxTokens: 12, temperature: 0.8, seed: 5 });
  assert.equal(completions.length, 3);
  const rendered = checkpoint.chatTemplate.render(messages(12), { tools, addGenerationPrompt: true });
  const promptIds = checkpoint.tokenizer.encode(rendered, { addSpecialTokens: false });
  assert.equal(policy.countTokens(messages(12), tools), promptIds.length);
  for (const c of completions) {
    assert.deepEqual(c.promptTokenIds, promptIds);
    const ids = c.completionTokenIds ?? [];
    assert.ok(ids.length >= 1 && ids.length <= 12);
    assert.equal(c.logprobs?.length, ids.length);
    assert.equal(c.modelLogprobs?.length, ids.length);
    assert.equal(c.tokenIdsExact, true);
    assert.equal(c.policyVersion, 0);
    assert.equal(c.modelId, dir.split('/').pop());
    const ended = checkpoint.stopTokenIds.includes(ids[ids.length - 1]);
    assert.equal(c.finishReason, ended ? 'stop' : 'length');
    if (!ended) assert.equal(ids.length, 12);
    const visible = ended ? ids.slice(0, -1) : ids;
    assert.equal(c.text, visible.length === 0 ? '' : checkpoint.tokenizer.decode(visible, { skipSpecialTokens: true }));
  }
  // The untempered logprobs are what the trainer's forward computes for these ids.
  const host = Object.fromEntries(Object.entries(checkpoint.tensors).map(([k, t]) => [k, { shape: t.shape, data: t.data }]));
  const params = toParams(host);
  const { logprobs } = await sequenceLogprobs(
    cfg,
    params,
    completions.map((c) => ({ promptIds, completionIds: c.completionTokenIds ?? [] })),
  );
  completions.forEach((c, i) => assert.ok(maxAbsDiff(c.modelLogprobs ?? [], logprobs[i]) < 1e-4));
  tree.dispose(params);
  await policy.close();
});

test('concurrent complete() calls are decoded as one batch, up to the row budget', async () => {
  const checkpoint = loadCheckpoint(dir);
  const cfg = parseModelConfig(checkpoint.configJson);
  const host = Object.fromEntries(Object.entries(checkpoint.tensors).map(([k, t]) => [k, { shape: t.shape, data: t.data }]));
  const params = toParams(host);
  const make = (maxBatchRows: number) =>
    new EmbeddedPolicy(
      { cfg, params, tokenizer: checkpoint.tokenizer, chatTemplate: checkpoint.chatTemplate, stopTokenIds: checkpoint.stopTokenIds, name: 'model:test', modelId: 'tiny' },
      { maxBatchRows, maxConcurrentBatches: 1, seed: 2 },
    );
  const policy = make(64);
  assert.equal(policy.rowsAtOnce, 64, 'rows per batch x one batch in flight');
  const calls = [12, 13, 14, 15, 16, 17].map((hand) => policy.complete({ messages: messages(hand), tools: [], maxTokens: 5, temperature: 1 }));
  const results = await Promise.all(calls);
  assert.deepEqual(policy.batchSizes, [6]);
  assert.ok(results.every((r) => r.length === 1 && (r[0].completionTokenIds?.length ?? 0) >= 1));

  // Row budget 4: n=3 + n=1 fill a batch, the next request waits for the next one.
  const small = make(4);
  await Promise.all([
    small.complete({ messages: messages(12), tools: [], n: 3, maxTokens: 3, temperature: 1 }),
    small.complete({ messages: messages(13), tools: [], n: 1, maxTokens: 3, temperature: 1 }),
    small.complete({ messages: messages(14), tools: [], n: 2, maxTokens: 3, temperature: 1 }),
  ]);
  assert.deepEqual(small.batchSizes, [2, 1]);

  // New weights: later completions carry the new version.
  policy.updateWeights(params, 7);
  const [c] = await policy.complete({ messages: messages(12), tools: [], maxTokens: 2, temperature: 0 });
  assert.equal(c.policyVersion, 7);
  await policy.close();
  await small.close();
  assert.equal(Object.values(params).every((p) => p.refCount === 1), true, 'the policies released their references');
  tree.dispose(params);
});

test('a completion ends with the end-of-turn id when the model samples it; the resolver knows model:DIR', async () => {
  const checkpoint = loadCheckpoint(dir);
  const cfg = parseModelConfig(checkpoint.configJson);
  const host = Object.fromEntries(Object.entries(checkpoint.tensors).map(([k, t]) => [k, { shape: t.shape, data: t.data }]));
  const params = toParams(host);
  const base = { cfg, params, tokenizer: checkpoint.tokenizer, chatTemplate: checkpoint.chatTemplate, name: 'model:test', modelId: 'tiny' };
  const greedy = new EmbeddedPolicy({ ...base, stopTokenIds: checkpoint.stopTokenIds });
  const [free] = await greedy.complete({ messages: messages(12), tools, maxTokens: 6, temperature: 0 });
  const ids = free.completionTokenIds ?? [];
  // Declare the greedy path's third token an end-of-turn id: the completion stops right there.
  const eot = new EmbeddedPolicy({ ...base, stopTokenIds: [ids[2]] });
  const [stopped] = await eot.complete({ messages: messages(12), tools, maxTokens: 6, temperature: 0 });
  const cut = ids.indexOf(ids[2]) + 1;
  assert.deepEqual(stopped.completionTokenIds, ids.slice(0, cut));
  assert.equal(stopped.finishReason, 'stop');
  await greedy.close();
  await eot.close();
  tree.dispose(params);

  const resolved = await resolvePolicy(`model:${dir}`, {} as PolicyContext);
  assert.equal(resolved.name, `model:${dir}`);
  await resolved.close?.();
  await assert.rejects(resolvePolicy('model:', {} as PolicyContext), /needs a checkpoint folder/);
});

/** Greedy decoding through the KV cache equals the argmax of the full forward, step by step; seeds make sampling repeatable. */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine } from '../../src/model/engine.ts';
import { Sampler } from '../../src/model/sampler.ts';
import { lastLogits, samplerConfig, samplerParams, tokens } from './sampler-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

test('temperature 0 follows the argmax of the uncached forward at every step', async () => {
  const cfg = samplerConfig();
  const params = samplerParams(cfg, 5);
  const sampler = new Sampler(cfg, params, { blockSize: 4, prefixCache: false });
  const prompts = [tokens(7, 1), tokens(3, 2)];
  const results = await sampler.generate(prompts.map((promptIds) => ({ promptIds, maxTokens: 10, temperature: 0 })));
  for (const [i, [sample]] of results.entries()) {
    const ids = [...prompts[i]];
    for (const token of sample.tokenIds) {
      assert.equal(token, argmax(await lastLogits(cfg, params, ids)), `prompt ${i} after ${ids.length} tokens`);
      ids.push(token);
    }
    // Greedy puts all the sampling mass on the chosen token.
    assert.ok(sample.logprobs.every((lp) => lp === 0));
    assert.ok(sample.modelLogprobs.every((lp) => lp < 0));
  }
  // The greedy continuation is not a constant (the check above would be weak on a flat model).
  assert.ok(new Set(results[0][0].tokenIds).size > 2, `greedy ids ${results[0][0].tokenIds}`);
  sampler.dispose();
});

test('the same seed gives the same samples; another seed, other samples; batch mates do not matter', async () => {
  const cfg = samplerConfig();
  const params = samplerParams(cfg, 6);
  const sampler = new Sampler(cfg, params, { blockSize: 8 });
  const request = { promptIds: tokens(6, 3), n: 3, maxTokens: 12, temperature: 1, seed: 42 };
  const [a] = await sampler.generate([request]);
  const [b] = await sampler.generate([request]);
  assert.deepEqual(b, a);
  const [c] = await sampler.generate([{ ...request, seed: 43 }]);
  assert.notDeepEqual(
    c.map((s) => s.tokenIds),
    a.map((s) => s.tokenIds),
  );
  // The n samples of one request are different draws.
  assert.notDeepEqual(a[0].tokenIds, a[1].tokenIds);
  // With other requests in the batch (another prompt, another batch size) the draws are the same.
  const [d] = await sampler.generate([request, { promptIds: tokens(9, 4), n: 4, maxTokens: 5, temperature: 0.5, seed: 1 }]);
  assert.deepEqual(
    d.map((s) => s.tokenIds),
    a.map((s) => s.tokenIds),
  );
  sampler.dispose();
});

/**
 * The sampler's logprobs equal the training forward's (src/model/logprobs.ts) for what it sampled,
 * through the batched, prefix-cached, KV-cached path at a temperature != 1: untempered ones equal
 * sequenceLogprobs at T = 1, sampling ones (no top-k/top-p) equal it at the sampling temperature.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine } from '../../src/model/engine.ts';
import { sequenceLogprobs } from '../../src/model/logprobs.ts';
import { PrefixCache } from '../../src/model/prefix-cache.ts';
import { Sampler, type SampleRequest } from '../../src/model/sampler.ts';
import { maxAbsDiff, samplerConfig, samplerParams, tokens } from './sampler-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

test('untempered and sampling logprobs equal the training forward at T=0.7 (batched, prefix-cached, n>1)', async () => {
  const cfg = samplerConfig();
  const params = samplerParams(cfg);
  const prefixCache = new PrefixCache();
  // Block size 8: decoding merges several blocks into the cache and grows it (capacity 32 -> 64);
  // different lengths make rows finish apart (the batch compacts mid-way).
  const sampler = new Sampler(cfg, params, { blockSize: 8, prefixCache, prefixGranule: 8, seed: 1, sequenceCache: false });
  const system = tokens(24, 1);
  const requests: SampleRequest[] = [
    { promptIds: [...system, ...tokens(5, 2)], n: 3, maxTokens: 40, temperature: 0.7, seed: 10 },
    { promptIds: [...system, ...tokens(2, 3)], n: 2, maxTokens: 6, temperature: 0.7, seed: 11 },
    { promptIds: [...system, ...tokens(9, 4)], n: 1, maxTokens: 13, temperature: 0.7, seed: 12 },
  ];
  // First call fills the prefix cache with the shared system prompt; the second one reads it.
  await sampler.generate(requests);
  assert.equal(prefixCache.size, 1);
  const reusedBefore = sampler.stats.prefill.reusedTokens;
  const results = await sampler.generate(requests.map((r) => ({ ...r, seed: (r.seed ?? 0) + 100 })));
  assert.equal(sampler.stats.prefill.reusedTokens - reusedBefore, system.length * requests.length, 'the system prompt came from the prefix cache');
  assert.ok(sampler.stats.decodeRowSteps > sampler.stats.decodeTokens, 'rows were batched with padding or finished rows');

  const samples = results.flatMap((r, i) => r.map((s) => ({ promptIds: requests[i].promptIds, completionIds: s.tokenIds })));
  const flat = results.flat();
  assert.deepEqual(
    flat.map((s) => s.tokenIds.length),
    [40, 40, 40, 6, 6, 13],
  );
  const untempered = await sequenceLogprobs(cfg, params, samples);
  const tempered = await sequenceLogprobs(cfg, params, samples, { temperature: 0.7 });
  flat.forEach((s, i) => {
    assert.ok(maxAbsDiff(s.modelLogprobs, untempered.logprobs[i]) < 1e-4, `sample ${i} model logprobs: ${s.modelLogprobs} vs ${untempered.logprobs[i]}`);
    assert.ok(maxAbsDiff(s.logprobs, tempered.logprobs[i]) < 1e-4, `sample ${i} sampling logprobs: ${s.logprobs} vs ${tempered.logprobs[i]}`);
  });
  // At T = 0.7 the two differ: the test compares different numbers, not one twice.
  assert.ok(maxAbsDiff(flat[0].logprobs, flat[0].modelLogprobs) > 1e-3);
  sampler.dispose();
  prefixCache.clear();
});

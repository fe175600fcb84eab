/** Work sharing: n samples share one prefill, identical prompts share it too, a common prefix is cached once. */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine } from '../../src/model/engine.ts';
import { commonPrefixLength, isPrefix, PrefixCache } from '../../src/model/prefix-cache.ts';
import { Sampler } from '../../src/model/sampler.ts';
import { maxAbsDiff, samplerConfig, samplerParams, tokens } from './sampler-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

test('n samples of a prompt share one prefill', async () => {
  const cfg = samplerConfig();
  const sampler = new Sampler(cfg, samplerParams(cfg), { prefixCache: false, sequenceCache: false });
  const prompt = tokens(11, 2);
  const [samples] = await sampler.generate([{ promptIds: prompt, n: 5, maxTokens: 4, temperature: 1, seed: 3 }]);
  assert.equal(samples.length, 5);
  assert.equal(sampler.stats.prefill.rows, 1);
  assert.equal(sampler.stats.prefill.tokens, prompt.length);
  // Their first tokens are draws from the same distribution: same model logprob for the same token.
  const byToken = new Map<number, number>();
  for (const s of samples) {
    const seen = byToken.get(s.tokenIds[0]);
    if (seen !== undefined) assert.equal(s.modelLogprobs[0], seen);
    byToken.set(s.tokenIds[0], s.modelLogprobs[0]);
  }
  // Two requests with the same prompt are prefilled once as well.
  await sampler.generate([
    { promptIds: prompt, maxTokens: 2, temperature: 1 },
    { promptIds: prompt, maxTokens: 3, temperature: 0 },
  ]);
  assert.equal(sampler.stats.prefill.rows, 2);
  sampler.dispose();
});

test('a prefix shared by the prompts is computed once (cut to the granule), cached, and gives the same results as without it', async () => {
  const cfg = samplerConfig();
  const params = samplerParams(cfg, 4);
  const system = tokens(30, 5);
  const prompts = [
    [...system, ...tokens(4, 6)],
    [...system, ...tokens(7, 7)],
    [...system, ...tokens(1, 8)],
  ];
  const requests = prompts.map((promptIds) => ({ promptIds, n: 2, maxTokens: 9, temperature: 0.8, seed: 21 }));
  const plain = new Sampler(cfg, params, { prefixCache: false, sequenceCache: false, blockSize: 8 });
  const expected = await plain.generate(requests);
  assert.equal(plain.stats.prefill.tokens, 30 * 3 + 4 + 7 + 1);

  const prefixCache = new PrefixCache();
  const cached = new Sampler(cfg, params, { prefixCache, blockSize: 8, prefixGranule: 8, sequenceCache: false });
  const first = await cached.generate(requests);
  // 30 shared tokens, cached in multiples of 8: 24 run once, the other 6 with each row.
  const rows = 6 + 4 + (6 + 7) + (6 + 1);
  assert.equal(cached.stats.prefill.tokens, 24 + rows, 'the shared 24 tokens ran once');
  assert.equal(prefixCache.size, 1);
  const second = await cached.generate(requests);
  assert.equal(cached.stats.prefill.tokens, 24 + 2 * rows, 'then came from the cache');
  for (const got of [first, second]) {
    got.flat().forEach((s, i) => {
      const want = expected.flat()[i];
      assert.deepEqual(s.tokenIds, want.tokenIds);
      assert.ok(maxAbsDiff(s.modelLogprobs, want.modelLogprobs) < 1e-5);
    });
  }
  // A prompt that only shares part of the cached prefix does not use it; new weights drop it.
  await cached.generate([{ promptIds: [...system.slice(0, 10), ...tokens(5, 9)], maxTokens: 2, temperature: 0 }]);
  assert.equal(cached.stats.prefill.tokens, 24 + 2 * rows + 15);
  cached.setParams(samplerParams(cfg, 99));
  assert.equal(prefixCache.size, 0);
  plain.dispose();
  cached.dispose();
});

test('prefix helpers', () => {
  assert.equal(commonPrefixLength([[1, 2, 3], [1, 2, 4], [1, 2]]), 2);
  assert.equal(commonPrefixLength([[5], [6]]), 0);
  assert.ok(isPrefix([1, 2], [1, 2, 3]));
  assert.ok(!isPrefix([1, 3], [1, 2, 3]));
  assert.ok(!isPrefix([1, 2, 3, 4], [1, 2, 3]));
});

test('the prefix cache keeps to its byte budget, dropping the least recently used entries', async () => {
  const cfg = samplerConfig();
  const params = samplerParams(cfg, 4);
  // One 24-token prefix: 2 layers x (k + v) x 2 kv heads x 24 x 8 floats x 4 bytes = 6,144 bytes.
  const prefixCache = new PrefixCache({ maxBytes: 13_000 });
  const sampler = new Sampler(cfg, params, { prefixCache, prefixGranule: 8, sequenceCache: false });
  const run = (seed: number) => {
    const system = tokens(24, seed);
    return sampler.generate([
      { promptIds: [...system, 1], maxTokens: 1, temperature: 0 },
      { promptIds: [...system, 2], maxTokens: 1, temperature: 0 },
    ]);
  };
  await run(1);
  await run(2);
  assert.equal(prefixCache.size, 2);
  await run(3);
  assert.equal(prefixCache.size, 2, 'the oldest entry made room');
  const before = sampler.stats.prefill.tokens;
  await run(1);
  assert.equal(sampler.stats.prefill.tokens - before, 24 + 2, 'entry 1 was evicted: its prefix ran again');
  sampler.dispose();
});

test('prompts of different widths run in calls of their own width and sample what each samples alone', async () => {
  const cfg = samplerConfig();
  const params = samplerParams(cfg, 8);
  // Chunk widths 16, 16, 96 (chunkBucket): the long prompt does not widen the short ones' call.
  const requests = [tokens(5, 1), tokens(90, 2), tokens(12, 3)].map((promptIds, i) => ({ promptIds, n: 2, maxTokens: 7, temperature: 0.9, seed: 30 + i }));
  const batched = new Sampler(cfg, params, { prefixCache: false, sequenceCache: false, blockSize: 8 });
  const together = await batched.generate(requests);
  assert.equal(batched.stats.prefill.tokens, 5 + 90 + 12);
  const alone = new Sampler(cfg, params, { prefixCache: false, sequenceCache: false, blockSize: 8 });
  for (const [i, request] of requests.entries()) {
    const [own] = await alone.generate([request]);
    own.forEach((s, j) => {
      assert.deepEqual(together[i][j].tokenIds, s.tokenIds, `request ${i} sample ${j}`);
      assert.ok(maxAbsDiff(together[i][j].modelLogprobs, s.modelLogprobs) < 1e-5);
    });
  }
  batched.dispose();
  alone.dispose();
});

/**
 * The sampler's sequence cache: a prompt that continues a finished sequence (the next turn of a
 * conversation) prefills only its new tokens, and samples exactly what the sampler without the cache
 * samples, with the training forward's logprobs; partial matches, misses beside hits, the byte
 * budget, and new weights.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine, np } from '../../src/model/engine.ts';
import { sequenceLogprobs } from '../../src/model/logprobs.ts';
import { Sampler, type SampleRequest, type SampleResult } from '../../src/model/sampler.ts';
import { SEQUENCE_BLOCK, SequenceCache, SequenceRows } from '../../src/model/sequence-cache.ts';
import { maxAbsDiff, samplerConfig, samplerParams, tokens } from './sampler-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const cfg = samplerConfig();

function assertSame(got: SampleResult[][], want: SampleResult[][]): void {
  got.flat().forEach((s, i) => {
    const w = want.flat()[i];
    assert.deepEqual(s.tokenIds, w.tokenIds, `sample ${i}`);
    assert.ok(maxAbsDiff(s.modelLogprobs, w.modelLogprobs) < 1e-4, `sample ${i}: ${s.modelLogprobs} vs ${w.modelLogprobs}`);
    assert.ok(maxAbsDiff(s.logprobs, w.logprobs) < 1e-4, `sample ${i} sampling logprobs`);
  });
}

test('the next turn continues the cached sequences: only new tokens run, the samples are the uncached ones', async () => {
  const params = samplerParams(cfg, 5);
  // Block size 8: the first turn decodes over several merged blocks; different lengths make rows
  // finish apart, so some are kept when the batch compacts and the rest at the end.
  const options = { blockSize: 8, prefixGranule: 8, seed: 1 };
  const cached = new Sampler(cfg, params, { ...options, sequenceCache: new SequenceCache() });
  const plain = new Sampler(cfg, params, { ...options, sequenceCache: false });
  const system = tokens(20, 1);
  const turn1: SampleRequest[] = [
    { promptIds: [...system, ...tokens(5, 2)], n: 2, maxTokens: 30, temperature: 0.8, seed: 10 },
    { promptIds: [...system, ...tokens(3, 3)], n: 1, maxTokens: 4, temperature: 0.8, seed: 11 },
    { promptIds: [...system, ...tokens(9, 4)], n: 1, maxTokens: 13, temperature: 0.8, seed: 12 },
  ];
  const first = await cached.generate(turn1);
  assertSame(first, await plain.generate(turn1));
  assert.equal(cached.sequenceCache!.size, 4, 'every sample kept');
  assert.equal(cached.stats.prefill.sequenceReusedTokens, 0);

  // Turn 2: each sample's conversation goes on (its prompt, its sample, a reply); one answer comes back
  // re-tokenised differently from its third token (reused up to there); two new conversations share a
  // new system prompt and miss.
  const samples = first.flatMap((r, i) => r.map((s) => ({ prompt: turn1[i].promptIds, ids: s.tokenIds })));
  const continued = samples.map(({ prompt, ids }, k) => [...prompt, ...ids, ...tokens(4, 20 + k)]);
  const altered = [...samples[0].prompt, ...samples[0].ids.slice(0, 2), (samples[0].ids[2] + 1) % cfg.vocabSize, ...tokens(3, 30)];
  const otherSystem = tokens(SEQUENCE_BLOCK, 40).map((t) => (t + 7) % cfg.vocabSize);
  const fresh = [
    [...otherSystem, ...tokens(3, 41)],
    [...otherSystem, ...tokens(6, 42)],
  ];
  const prompts = [...continued, altered, ...fresh];
  const turn2: SampleRequest[] = prompts.map((promptIds, k) => ({ promptIds, n: k === 0 ? 2 : 1, maxTokens: 6 + k, temperature: 0.9, seed: 50 + k }));
  const before = { ...cached.stats.prefill };
  const second = await cached.generate(turn2);
  assertSame(second, await plain.generate(turn2));
  // A finished sample's sequence is its prompt and every token but the last (never fed to the model).
  const expected = [...samples.map(({ prompt, ids }) => prompt.length + ids.length - 1), samples[0].prompt.length + 2];
  assert.equal(cached.stats.prefill.sequenceReusedTokens - before.sequenceReusedTokens, expected.reduce((a, b) => a + b, 0));
  // What ran: the hits' new tokens, the misses' shared prefix once (16 tokens, two granules) and their own tails.
  const ran = prompts.slice(0, 5).reduce((n, p, i) => n + p.length - expected[i], 0) + SEQUENCE_BLOCK + 3 + 6;
  assert.equal(cached.stats.prefill.tokens - before.tokens, ran);

  // And the logprobs are the training forward's.
  const flat = second.flat();
  const requestOf = turn2.flatMap((r, i) => Array.from({ length: r.n ?? 1 }, () => i));
  const forward = await sequenceLogprobs(cfg, params, flat.map((s, i) => ({ promptIds: turn2[requestOf[i]].promptIds, completionIds: s.tokenIds })));
  flat.forEach((s, i) => assert.ok(maxAbsDiff(s.modelLogprobs, forward.logprobs[i]) < 1e-4, `turn 2 sample ${i}`));

  // New weights drop the cache: nothing computed with the old ones is reused.
  cached.setParams(samplerParams(cfg, 6));
  assert.equal(cached.sequenceCache!.size, 0);
  cached.dispose();
  plain.dispose();
});

test('the cache finds the longest shared prefix, keeps each sequence once, and keeps to its byte budget', () => {
  const H = cfg.numKvHeads;
  const hd = cfg.headDim;
  const rows = (n: number, slots: number) =>
    new SequenceRows(
      Array.from({ length: cfg.numLayers }, () => ({ k: np.zeros([n, H, slots, hd]), v: np.zeros([n, H, slots, hd]) })),
      Array.from({ length: n }, () => slots),
    );
  const a = tokens(40, 1);
  const b = [...a.slice(0, 33), ...tokens(7, 2)];
  // One row of 40 slots: 2 layers x (k + v) x 2 heads x 40 x 8 floats x 4 bytes = 10,240 bytes.
  const cache = new SequenceCache({ maxBytes: 25_000 });
  cache.insert(rows(2, 40), [
    { tokens: a, row: 0 },
    { tokens: b, row: 1 },
  ]);
  assert.equal(cache.size, 2);
  assert.equal(cache.bytesHeld, 20_480);
  const probe = [...a.slice(0, 35), 99];
  assert.deepEqual(cache.match(probe)?.length, 35, 'the longer match wins');
  assert.equal(cache.match(probe)?.entry.row, 0);
  assert.equal(cache.match([...b, 5], 36)?.length, 36, 'capped by maxLength');
  assert.equal(cache.match(tokens(40, 9)), null, 'nothing shared');
  assert.equal(cache.match(a.slice(0, SEQUENCE_BLOCK - 1)), null, 'shorter than a block');
  const duplicate = rows(1, 40);
  cache.insert(duplicate, [{ tokens: a, row: 0 }]);
  assert.equal(cache.size, 2, 'a sequence already cached is not added twice');
  assert.equal(cache.bytesHeld, 20_480, 'and its array is not kept');
  assert.throws(() => duplicate.layers[0].k.ref, /disposed|freed|deleted/i);
  cache.clear();
  assert.equal(cache.size, 0);
  assert.equal(cache.bytesHeld, 0);

  // Over the budget the least recently used entries leave: b (a was matched last).
  const c = tokens(40, 3);
  cache.insert(rows(1, 40), [{ tokens: a, row: 0 }]);
  cache.insert(rows(1, 40), [{ tokens: b, row: 0 }]);
  cache.match(probe);
  cache.insert(rows(1, 40), [{ tokens: c, row: 0 }]);
  assert.equal(cache.size, 2);
  assert.equal(cache.bytesHeld, 20_480);
  assert.equal(cache.match([...b, 1])?.length, 33, 'b is gone: only the prefix it shared with a is found');
  assert.equal(cache.match([...c, 1])?.length, 40);
  cache.clear();

  // The budget counts arrays, not entries: one entry left in a batch's array keeps all of it. Here
  // dropping b frees nothing (a shares its array), so a goes too, though it was used last.
  cache.insert(rows(2, 40), [
    { tokens: a, row: 0 },
    { tokens: b, row: 1 },
  ]);
  cache.match(probe);
  cache.insert(rows(1, 40), [{ tokens: c, row: 0 }]);
  assert.equal(cache.size, 1);
  assert.equal(cache.bytesHeld, 10_240);
  assert.equal(cache.match(probe), null);
  assert.equal(cache.match([...c, 1])?.length, 40);
  cache.clear();
});

test('clearCaches: the next prompts are computed whole, bit for bit as a fresh sampler computes them', async () => {
  const params = samplerParams(cfg, 7);
  const options = { blockSize: 8, prefixGranule: 8, seed: 1 };
  const used = new Sampler(cfg, params, options);
  const fresh = new Sampler(cfg, params, options);
  const system = tokens(24, 1);
  // An evaluation's prompts, then a training step's that share and continue them.
  const earlier: SampleRequest[] = [0, 1, 2].map((k) => ({ promptIds: [...system, ...tokens(5 + k, 2 + k)], n: 1, maxTokens: 6, temperature: 0, seed: k }));
  const done = await used.generate(earlier);
  const later: SampleRequest[] = done.map(([s], k) => ({ promptIds: [...earlier[k].promptIds, ...s.tokenIds, ...tokens(3, 9 + k)], n: 2, maxTokens: 5, temperature: 1, seed: 20 + k }));
  assert.ok(used.prefixCache!.size > 0 && used.sequenceCache!.size > 0, 'the first batch filled both caches');
  used.clearCaches();
  assert.equal(used.prefixCache!.size, 0);
  assert.equal(used.sequenceCache!.size, 0);
  const reused = (s: Sampler) => s.stats.prefill.reusedTokens + s.stats.prefill.sequenceReusedTokens;
  const before = reused(used);
  const got = await used.generate(later);
  assert.deepEqual(got, await fresh.generate(later));
  // What the batch shares within itself is still reused, and nothing from before.
  assert.equal(reused(used) - before, reused(fresh));
  used.dispose();
  fresh.dispose();
});

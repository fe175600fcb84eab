/** Stop token ids, stop strings (on the decoded text), max tokens, and request validation. */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { initEngine } from '../../src/model/engine.ts';
import { Sampler } from '../../src/model/sampler.ts';
import { samplerConfig, samplerParams, tokens } from './sampler-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

// A toy tokenizer: token i is one letter (37 ids over 26 letters and 11 digits/punctuation).
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789.';
const decode = (ids: number[]): string => ids.map((i) => ALPHABET[i]).join('');

test('stop token ids end a sample with the token kept; stop strings cut the text; maxTokens gives length', async () => {
  const cfg = samplerConfig();
  const params = samplerParams(cfg, 9);
  const sampler = new Sampler(cfg, params, { blockSize: 8, decode, prefixCache: false });
  const prompt = tokens(5, 8);
  const [[free]] = await sampler.generate([{ promptIds: prompt, maxTokens: 24, temperature: 0, stopTokenIds: [] }]);
  assert.equal(free.finishReason, 'length');
  assert.equal(free.tokenIds.length, 24);
  assert.equal(free.text, decode(free.tokenIds));

  // A stop id first sampled at step j > 0 ends the sample there, the id included.
  const j = free.tokenIds.findIndex((t, i) => i > 2 && free.tokenIds.indexOf(t) === i);
  assert.ok(j > 0, `a fresh token after step 2 in ${free.tokenIds}`);
  const stopId = free.tokenIds[j];
  const [[byToken]] = await sampler.generate([{ promptIds: prompt, maxTokens: 24, temperature: 0, stopTokenIds: [stopId] }]);
  assert.equal(byToken.finishReason, 'stop');
  assert.deepEqual(byToken.stopReason, { type: 'token', tokenId: stopId });
  assert.deepEqual(byToken.tokenIds, free.tokenIds.slice(0, j + 1));
  assert.equal(byToken.logprobs.length, j + 1);
  assert.equal(byToken.text, decode(free.tokenIds.slice(0, j)));

  // A stop string: the ids run through the token that completes it, the text stops before it.
  const text = free.text ?? '';
  const stop = text.slice(10, 12);
  const at = text.indexOf(stop);
  const [[byString]] = await sampler.generate([{ promptIds: prompt, maxTokens: 24, temperature: 0, stopTokenIds: [], stop: ['zz-never', stop] }]);
  assert.equal(byString.finishReason, 'stop');
  assert.deepEqual(byString.stopReason, { type: 'string', stop });
  assert.equal(byString.text, text.slice(0, at));
  assert.deepEqual(byString.tokenIds, free.tokenIds.slice(0, at + stop.length));
  sampler.dispose();
});

test('the config eos ids are the default stop ids; the context bounds max tokens', async () => {
  const cfg = samplerConfig({ max_position_embeddings: 12 });
  const params = samplerParams(cfg, 9);
  const sampler = new Sampler(cfg, params, { prefixCache: false });
  const prompt = tokens(5, 8);
  const [[free]] = await sampler.generate([{ promptIds: prompt, maxTokens: 50, temperature: 0 }]);
  assert.equal(free.finishReason, 'length');
  assert.equal(free.tokenIds.length, 12 - 5, 'prompt + completion fit the context');
  const eosCfg = { ...cfg, eosTokenIds: [free.tokenIds[0]] };
  const eosSampler = new Sampler(eosCfg, params, { prefixCache: false });
  const [[stopped]] = await eosSampler.generate([{ promptIds: prompt, maxTokens: 50, temperature: 0 }]);
  assert.deepEqual(stopped.tokenIds, [free.tokenIds[0]]);
  assert.equal(stopped.finishReason, 'stop');
  sampler.dispose();
  eosSampler.dispose();
});

test('bad requests fail with the field named', async () => {
  const cfg = samplerConfig();
  const sampler = new Sampler(cfg, samplerParams(cfg), { prefixCache: false });
  const base = { promptIds: [1, 2], maxTokens: 3, temperature: 1 };
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ promptIds: [] }, /requests\[0\]\.promptIds/],
    [{ promptIds: [1, 99] }, /promptIds must be .* \[0, 37\)/],
    [{ maxTokens: 0 }, /maxTokens/],
    [{ temperature: -1 }, /temperature/],
    [{ topP: 0 }, /topP/],
    [{ topK: 1.5 }, /topK/],
    [{ n: 0 }, /\.n must/],
    [{ stop: [''] }, /stop must/],
    [{ seed: -3 }, /seed/],
    [{ promptIds: tokens(256, 1) }, /context is 256/],
  ];
  for (const [patch, message] of cases) {
    await assert.rejects(sampler.generate([{ ...base, ...patch } as never]), (e: Error) => e instanceof UsageError && message.test(e.message));
  }
  // Stop strings need a decoder.
  await assert.rejects(sampler.generate([{ ...base, stop: ['x'] }]), /decode function/);
  sampler.dispose();
});

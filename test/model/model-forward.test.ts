import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine } from '../../src/model/engine.ts';
import { sequenceLogprobs } from '../../src/model/logprobs.ts';
import { toParams } from '../../src/model/params.ts';
import { referenceCompletionLogprobs } from './model-reference.ts';
import { maxAbsDiff, randomHostParams, tinyConfig } from './model-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const samples = [
  { promptIds: [1, 5, 9], completionIds: [3, 3, 7, 2] },
  { promptIds: [4], completionIds: [8, 11] },
  { promptIds: [2, 6, 10, 14, 18, 22], completionIds: [30] },
];

for (const [modelType, extra] of [
  ['llama', {}],
  ['llama', { attention_bias: true, mlp_bias: true, rope_scaling: { rope_type: 'linear', factor: 2 } }],
  ['qwen2', {}],
  ['qwen3', {}],
  ['qwen3', { vocab_size: 1100 }], // above GATHER_EMBEDDING_MIN_VOCAB: the gather embedding
] as const) {
  test(`training-forward logprobs equal a plain-JS forward: ${modelType} ${JSON.stringify(extra)}`, async () => {
    const cfg = tinyConfig(modelType, extra);
    const host = randomHostParams(cfg, 7);
    const params = toParams(host);
    for (const pack of [false, true]) {
      const { logprobs } = await sequenceLogprobs(cfg, params, samples, { pack });
      samples.forEach((s, i) => {
        const expected = referenceCompletionLogprobs(cfg, host, s.promptIds, s.completionIds);
        assert.equal(logprobs[i].length, s.completionIds.length);
        assert.ok(maxAbsDiff(logprobs[i], expected) < 1e-4, `pack=${pack} sample ${i}: ${logprobs[i]} vs ${expected}`);
      });
    }
    // The engine reads a logprob as log-softmax: it is never positive, and differs across tokens.
    const flat = (await sequenceLogprobs(cfg, params, samples)).logprobs.flat();
    assert.ok(flat.every((v) => v <= 0) && new Set(flat.map((v) => v.toFixed(4))).size > 1);
  });
}

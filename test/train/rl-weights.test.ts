/**
 * RlWeights under LoRA: the policy's update and the step's snapshot share one merge of the adapters
 * into the base (the same arrays), a new merge follows each update, and the merged weights are
 * W + s·B·A as mergeLoraHost computes them.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine, tree } from '../../src/model/engine.ts';
import { batchTensors } from '../../src/model/logprobs.ts';
import { initLora, mergeLoraHost, type LoraConfig } from '../../src/model/lora.ts';
import { toHostParams, toParams } from '../../src/model/params.ts';
import { buildTokenBatch } from '../../src/model/token-batch.ts';
import { maskedNll } from '../../src/model/train-throughput.ts';
import { RlWeights } from '../../src/train/rl-weights.ts';
import type { RlStepInputs } from '../../src/train/trainer-loss.ts';
import { maxAbsDiff, randomHostParams, tinyConfig } from '../model/model-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const cfg = tinyConfig('qwen3');
const lora: LoraConfig = { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj', 'down_proj'] };
const TARGET = 'model.layers.0.self_attn.q_proj.weight';
const OTHER = 'model.layers.0.self_attn.k_proj.weight';

// The test's loss reads a token batch where RlStepInputs' tensors would be.
type Batch = ReturnType<typeof batchTensors>;
const batch = (): RlStepInputs => batchTensors(cfg, buildTokenBatch([{ promptIds: [1, 2, 3], completionIds: [4, 5, 6] }])) as unknown as RlStepInputs;

test('under LoRA the policy and the snapshot share one merge per update', async () => {
  const baseHost = randomHostParams(cfg, 3, 0.2);
  const weights = new RlWeights(cfg, toParams(baseHost), (params, inputs) => maskedNll(cfg, params, inputs as unknown as Batch), { lr: 1e-2 }, {
    config: lora,
    adapters: initLora(cfg, lora, 1),
  });
  try {
    const first = weights.effective();
    const again = weights.effective();
    // No update between them: the same merged arrays, not a second merge.
    assert.equal(again[TARGET], first[TARGET]);
    tree.dispose(again);
    const host = await weights.effectiveHost();
    assert.deepEqual(host[TARGET].data, (await toHostParams(first))[TARGET].data);

    await weights.trainer.step(weights.withBase(batch()));
    const moved = weights.effective();
    assert.notEqual(moved[TARGET], first[TARGET]);
    const movedHost = await toHostParams(moved);
    const expected = mergeLoraHost(cfg, lora, baseHost, await toHostParams(weights.trainer.params));
    assert.ok(maxAbsDiff(movedHost[TARGET].data, expected[TARGET].data) < 1e-6);
    assert.ok(maxAbsDiff(movedHost[TARGET].data, baseHost[TARGET].data) > 1e-5, 'the update moved a target');
    assert.deepEqual(movedHost[OTHER].data, baseHost[OTHER].data);
    // The earlier merge, still held by its caller, is untouched by the new one.
    assert.ok(maxAbsDiff((await toHostParams(first))[TARGET].data, baseHost[TARGET].data) < 1e-6);
    tree.dispose(first);
    tree.dispose(moved);
  } finally {
    weights.dispose();
  }
});

import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initEngine, nn, random, tree, valueAndGrad, type Tensor } from '../../src/model/engine.ts';
import { batchTensors, tokenLogprobs, type BatchTensors } from '../../src/model/logprobs.ts';
import { initLoraHost, type LoraConfig } from '../../src/model/lora.ts';
import { ParamTrainer } from '../../src/model/param-trainer.ts';
import { toHostParams, toParams, type HostParams, type Params } from '../../src/model/params.ts';
import { buildTokenBatch } from '../../src/model/token-batch.ts';
import { decoderHidden, lmHead } from '../../src/model/transformer.ts';
import { maxAbsDiff, randomHostParams, tinyConfig } from './model-fixtures.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const cfg = tinyConfig('llama');
const samples = [
  { promptIds: [1, 2, 3], completionIds: [4, 5, 6, 7] },
  { promptIds: [9, 8], completionIds: [7, 6, 5] },
];
const base = randomHostParams(cfg, 5, 0.2);

function adaptersWithB(lora: LoraConfig): HostParams {
  const host = initLoraHost(cfg, lora, 3);
  let k = 0;
  for (const [name, t] of Object.entries(host)) if (name.endsWith('lora_B.weight')) t.data.forEach((_, i) => (t.data[i] = Math.sin(++k) * 0.3));
  return host;
}

/** Σ mask·logp with the adapters on `base`; `key` draws dropout. */
function objective(lora: LoraConfig, adapters: Params, inputs: { base: Params; batch: BatchTensors; key?: Tensor }): Tensor {
  const { mask, ...rest } = inputs.batch;
  const { logprobs } = tokenLogprobs(cfg, inputs.base, rest, { lora: { config: lora, adapters, key: inputs.key } });
  return logprobs.mul(mask).sum();
}

test('adapters inside the projections equal merged weights, in value and in gradient', async () => {
  const lora: LoraConfig = { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };
  const adapters = adaptersWithB(lora);
  const batch = (): BatchTensors => batchTensors(cfg, buildTokenBatch(samples));
  // Merged (the default path without dropout).
  const [vMerged, gMerged] = valueAndGrad((a: Params, b: BatchTensors) => objective(lora, a, { base: toParams(base), batch: b }))(toParams(adapters), batch());
  // In-projection: call the layers with the adapters directly.
  const inline = (a: Params, b: BatchTensors): Tensor => {
    const p = toParams(base);
    const { mask, tokens, targets, cos, sin, attnMask } = b;
    const hidden = decoderHidden(cfg, p, tokens, { cos, sin }, attnMask, { config: lora, adapters: a });
    const logits = lmHead(cfg, p, hidden);
    const picked = nn.logSoftmax(logits, -1).mul(nn.oneHot(targets, cfg.vocabSize)).sum(-1);
    return picked.mul(mask).sum();
  };
  const [vInline, gInline] = valueAndGrad(inline)(toParams(adapters), batch());
  const a = (await vMerged.data())[0];
  const b = (await vInline.data())[0];
  assert.ok(Math.abs(a - b) < 1e-4, `${a} vs ${b}`);
  const gm = await toHostParams(gMerged as Params);
  const gi = await toHostParams(gInline as Params);
  for (const name of Object.keys(adapters)) {
    const scale = Math.max(...Array.from(gm[name].data, Math.abs));
    assert.ok(scale > 1e-4, `${name} has a gradient`);
    assert.ok(maxAbsDiff(gm[name].data, gi[name].data) < 1e-4 * Math.max(1, scale), name);
  }
});

test('LoRA dropout: a key draws the mask (same key, same loss), training with dropout still learns', async () => {
  const lora: LoraConfig = { r: 4, alpha: 8, dropout: 0.3, targetModules: ['q_proj', 'v_proj', 'down_proj'] };
  const adapters = adaptersWithB(lora);
  const value = async (key?: number): Promise<number> => {
    const out = objective(lora, toParams(adapters), {
      base: toParams(base),
      batch: batchTensors(cfg, buildTokenBatch(samples)),
      key: key === undefined ? undefined : random.key(key),
    });
    return (await out.data())[0];
  };
  const [k1, k1again, k2, none] = [await value(1), await value(1), await value(2), await value()];
  assert.equal(k1, k1again);
  assert.notEqual(k1, k2);
  assert.notEqual(k1, none);

  type Inputs = { base: Params; batch: BatchTensors; key: Tensor };
  const baseParams = toParams(base);
  const trainer = new ParamTrainer<Inputs>(toParams(initLoraHost(cfg, lora, 1)), (a, i) => objective(lora, a, i).neg(), { lr: 2e-2 });
  const losses: number[] = [];
  for (let step = 0; step < 10; step++) {
    const r = await trainer.step({ base: tree.ref(baseParams), batch: batchTensors(cfg, buildTokenBatch(samples)), key: random.key(100 + step) });
    losses.push(r.loss);
  }
  assert.ok(losses.slice(-3).reduce((x, y) => x + y) < losses.slice(0, 3).reduce((x, y) => x + y) - 0.3, losses.join(' '));
  trainer.dispose();
  tree.dispose(baseParams);
});

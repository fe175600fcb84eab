/** The random init: width-scaled (1/√hidden, not below 0.02), residual projections scaled by depth, norms 1. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_MODEL_CONFIG } from '../../src/model/builtin-configs.ts';
import { initHostParams, initStd } from '../../src/model/params.ts';

function std(data: Float32Array): number {
  let sum = 0;
  let sq = 0;
  for (const x of data) {
    sum += x;
    sq += x * x;
  }
  const mean = sum / data.length;
  return Math.sqrt(sq / data.length - mean * mean);
}

test('init std is 1/√hidden for small widths and 0.02 (GPT-2, Llama) from width 2,500 up', () => {
  assert.equal(initStd({ ...DEFAULT_MODEL_CONFIG, hiddenSize: 128 }), 1 / Math.sqrt(128));
  assert.equal(initStd({ ...DEFAULT_MODEL_CONFIG, hiddenSize: 2500 }), 0.02);
  assert.equal(initStd({ ...DEFAULT_MODEL_CONFIG, hiddenSize: 4096 }), 0.02);
});

test('the default model draws its weights at that std, residual writers scaled by 1/√(2·layers), norms at 1', () => {
  const cfg = { ...DEFAULT_MODEL_CONFIG, vocabSize: 512 };
  const params = initHostParams(cfg, 7);
  const base = 1 / Math.sqrt(cfg.hiddenSize);
  const residual = base / Math.sqrt(2 * cfg.numLayers);
  for (const [name, expected] of [
    ['model.embed_tokens.weight', base],
    ['model.layers.0.self_attn.q_proj.weight', base],
    ['model.layers.1.mlp.up_proj.weight', base],
    ['model.layers.0.self_attn.o_proj.weight', residual],
    ['model.layers.2.mlp.down_proj.weight', residual],
  ] as const) {
    const measured = std(params[name].data);
    assert.ok(Math.abs(measured - expected) / expected < 0.03, `${name}: std ${measured}, expected ${expected}`);
  }
  assert.ok(params['model.norm.weight'].data.every((x) => x === 1));
  // Seeded: the same seed gives the same weights, another seed others.
  assert.deepEqual(initHostParams(cfg, 7)['model.layers.0.self_attn.q_proj.weight'].data, params['model.layers.0.self_attn.q_proj.weight'].data);
  assert.notDeepEqual(initHostParams(cfg, 8)['model.layers.0.self_attn.q_proj.weight'].data, params['model.layers.0.self_attn.q_proj.weight'].data);
});

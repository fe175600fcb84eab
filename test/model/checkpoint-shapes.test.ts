import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expectedTensorShapes } from '../../src/model/checkpoint-shapes.ts';

const count = (shapes: Record<string, number[]>) => Object.values(shapes).reduce((n, s) => n + s.reduce((a, b) => a * b, 1), 0);

test("Qwen3-0.6B's config implies its published parameter count", () => {
  // Values from Qwen/Qwen3-0.6B config.json; the model card gives 0.6B parameters, 0.44B without embeddings.
  const shapes = expectedTensorShapes({
    model_type: 'qwen3',
    vocab_size: 151936,
    hidden_size: 1024,
    intermediate_size: 3072,
    num_hidden_layers: 28,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    tie_word_embeddings: true,
    attention_bias: false,
  });
  assert.equal(count(shapes), 596_049_920);
  assert.equal(count(shapes) - 151936 * 1024, 440_467_456);
  assert.deepEqual(shapes['model.layers.27.self_attn.q_proj.weight'], [2048, 1024]);
  assert.deepEqual(shapes['model.layers.0.self_attn.k_proj.weight'], [1024, 1024]);
  assert.deepEqual(shapes['model.layers.0.self_attn.q_norm.weight'], [128]);
  assert.equal(shapes['lm_head.weight'], undefined);
  assert.equal(Object.keys(shapes).length, 1 + 28 * 11 + 1);
});

test('qwen2 has q/k/v biases, llama has none unless attention_bias, untied adds lm_head', () => {
  const base = { vocab_size: 10, hidden_size: 8, intermediate_size: 12, num_hidden_layers: 1, num_attention_heads: 2 };
  const qwen2 = expectedTensorShapes({ ...base, model_type: 'qwen2', num_key_value_heads: 1 });
  assert.deepEqual(qwen2['model.layers.0.self_attn.k_proj.bias'], [4]);
  assert.equal(qwen2['model.layers.0.self_attn.o_proj.bias'], undefined);
  assert.equal(qwen2['model.layers.0.self_attn.q_norm.weight'], undefined);
  assert.deepEqual(qwen2['lm_head.weight'], [10, 8]);
  const llama = expectedTensorShapes({ ...base, model_type: 'llama' });
  assert.equal(llama['model.layers.0.self_attn.q_proj.bias'], undefined);
  assert.deepEqual(llama['model.layers.0.self_attn.v_proj.weight'], [8, 8], 'kv heads default to attention heads');
  const biased = expectedTensorShapes({ ...base, model_type: 'llama', attention_bias: true });
  assert.deepEqual(biased['model.layers.0.self_attn.o_proj.bias'], [8]);
});

test('bad config fields are named', () => {
  const base = { model_type: 'llama', vocab_size: 10, hidden_size: 8, intermediate_size: 12, num_hidden_layers: 1, num_attention_heads: 3 };
  assert.throws(() => expectedTensorShapes(base), /hidden_size 8 is not a multiple of num_attention_heads 3/);
  assert.throws(() => expectedTensorShapes({ ...base, num_attention_heads: 4, num_key_value_heads: 3 }), /not a multiple of num_key_value_heads 3/);
  assert.throws(() => expectedTensorShapes({ ...base, vocab_size: '10' }), /config\.json: vocab_size/);
  assert.throws(() => expectedTensorShapes({ ...base, num_attention_heads: 2, tie_word_embeddings: 'yes' }), /config\.json: tie_word_embeddings/);
  assert.throws(() => expectedTensorShapes({ ...base, model_type: 'gpt2' }), /config\.json: model_type "gpt2" is not supported/);
});

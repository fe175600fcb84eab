import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { DEFAULT_MODEL_CONFIG, REFERENCE_BENCH_CONFIG, defaultModelConfigFor } from '../../src/model/builtin-configs.ts';
import { tensorShapesFor } from '../../src/model/checkpoint-shapes.ts';
import { modelConfigToHf, parseModelConfig } from '../../src/model/config.ts';
import { countParams, paramShapes } from '../../src/model/params.ts';

// Trimmed from the real config.json files of Llama-3.2-1B, Qwen2.5-0.5B-Instruct and Qwen3-0.6B.
const LLAMA32_1B = {
  architectures: ['LlamaForCausalLM'], attention_bias: false, attention_dropout: 0.0, bos_token_id: 128000,
  eos_token_id: [128001, 128008, 128009], head_dim: 64, hidden_act: 'silu', hidden_size: 2048,
  initializer_range: 0.02, intermediate_size: 8192, max_position_embeddings: 131072, mlp_bias: false,
  model_type: 'llama', num_attention_heads: 32, num_hidden_layers: 16, num_key_value_heads: 8,
  pretraining_tp: 1, rms_norm_eps: 1e-5,
  rope_scaling: { factor: 32.0, high_freq_factor: 4.0, low_freq_factor: 1.0, original_max_position_embeddings: 8192, rope_type: 'llama3' },
  rope_theta: 500000.0, tie_word_embeddings: true, torch_dtype: 'bfloat16', use_cache: true, vocab_size: 128256,
};
const QWEN25_05B = {
  architectures: ['Qwen2ForCausalLM'], attention_dropout: 0.0, bos_token_id: 151643, eos_token_id: 151645,
  hidden_act: 'silu', hidden_size: 896, initializer_range: 0.02, intermediate_size: 4864,
  max_position_embeddings: 32768, max_window_layers: 21, model_type: 'qwen2', num_attention_heads: 14,
  num_hidden_layers: 24, num_key_value_heads: 2, rms_norm_eps: 1e-6, rope_theta: 1000000.0,
  sliding_window: 32768, tie_word_embeddings: true, torch_dtype: 'bfloat16', use_cache: true,
  use_sliding_window: false, vocab_size: 151936,
};
const QWEN3_06B = {
  architectures: ['Qwen3ForCausalLM'], attention_bias: false, attention_dropout: 0.0, bos_token_id: 151643,
  eos_token_id: 151645, head_dim: 128, hidden_act: 'silu', hidden_size: 1024, initializer_range: 0.02,
  intermediate_size: 3072, max_position_embeddings: 40960, max_window_layers: 28, model_type: 'qwen3',
  num_attention_heads: 16, num_hidden_layers: 28, num_key_value_heads: 8, rms_norm_eps: 1e-6,
  rope_scaling: null, rope_theta: 1000000, sliding_window: null, tie_word_embeddings: true,
  torch_dtype: 'bfloat16', use_cache: true, use_sliding_window: false, vocab_size: 151936,
};

test('parses Llama 3.2 (GQA, llama3 rope scaling, eos list)', () => {
  const c = parseModelConfig(LLAMA32_1B);
  assert.equal(c.architecture, 'llama');
  assert.deepEqual([c.numHeads, c.numKvHeads, c.headDim, c.numLayers], [32, 8, 64, 16]);
  assert.deepEqual(c.ropeScaling, { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 });
  assert.deepEqual(c.eosTokenIds, [128001, 128008, 128009]);
  assert.equal(c.bosTokenId, 128000);
  assert.deepEqual([c.qkvBias, c.oBias, c.mlpBias, c.qkNorm, c.tieWordEmbeddings], [false, false, false, false, true]);
  assert.equal(c.rmsNormEps, 1e-5);
  assert.equal(c.ropeTheta, 500000);
  // 1.236B parameters, as published for Llama-3.2-1B.
  assert.equal(countParams(c), 1_235_814_400);
});

test('parses Qwen2.5 (q/k/v biases, head_dim from hidden_size)', () => {
  const c = parseModelConfig(QWEN25_05B);
  assert.equal(c.headDim, 64);
  assert.deepEqual([c.qkvBias, c.oBias, c.qkNorm], [true, false, false]);
  assert.deepEqual(c.eosTokenIds, [151645]);
  assert.equal(countParams(c), 494_032_768); // Qwen2.5-0.5B: 0.49B
});

test('parses Qwen3 (explicit head_dim, q/k norm)', () => {
  const c = parseModelConfig(QWEN3_06B);
  assert.equal(c.headDim, 128);
  assert.equal(c.numHeads * c.headDim, 2048); // != hidden_size: head_dim is read, not derived
  assert.deepEqual([c.qkvBias, c.qkNorm, c.ropeScaling.type], [false, true, 'none']);
  assert.equal(countParams(c), 596_049_920); // Qwen3-0.6B: 0.6B
  assert.ok(paramShapes(c)['model.layers.0.self_attn.q_norm.weight']);
});

test('the parameter table equals the checkpoint loader table', () => {
  for (const json of [LLAMA32_1B, QWEN25_05B, QWEN3_06B, { ...LLAMA32_1B, attention_bias: true, mlp_bias: true, tie_word_embeddings: false }]) {
    const c = parseModelConfig(json);
    assert.deepEqual(paramShapes(c), tensorShapesFor(c));
  }
});

test('config.json written from a ModelConfig parses back to the same config', () => {
  for (const c of [DEFAULT_MODEL_CONFIG, REFERENCE_BENCH_CONFIG, parseModelConfig(LLAMA32_1B), parseModelConfig(QWEN25_05B), parseModelConfig(QWEN3_06B)]) {
    assert.deepEqual(parseModelConfig(JSON.parse(JSON.stringify(modelConfigToHf(c)))), c);
  }
});

test('built-in configs have the sizes the design states', () => {
  assert.ok(countParams(DEFAULT_MODEL_CONFIG) > 500_000 && countParams(DEFAULT_MODEL_CONFIG) < 1_000_000, String(countParams(DEFAULT_MODEL_CONFIG)));
  assert.equal(REFERENCE_BENCH_CONFIG.hiddenSize, 128);
  assert.equal(REFERENCE_BENCH_CONFIG.intermediateSize, 512);
  assert.equal(countParams(REFERENCE_BENCH_CONFIG), 590_464);
  const sized = defaultModelConfigFor({ vocabSize: 1500, eosTokenIds: [1499] });
  assert.equal(sized.vocabSize, 1500);
  assert.deepEqual(sized.eosTokenIds, [1499]);
});

function rejects(json: unknown, field: RegExp): void {
  assert.throws(() => parseModelConfig(json), (e: unknown) => e instanceof UsageError && field.test(e.message), String(field));
}

test('bad configs are rejected with the field named', () => {
  rejects({ ...QWEN3_06B, model_type: 'mistral' }, /model_type "mistral" is not supported/);
  rejects({ ...QWEN3_06B, model_type: undefined }, /model_type undefined is not supported/);
  rejects('nope', /must be a JSON object/);
  rejects({ ...QWEN3_06B, hidden_size: -3 }, /hidden_size/);
  rejects({ ...QWEN3_06B, num_hidden_layers: 2.5 }, /num_hidden_layers/);
  rejects({ ...QWEN3_06B, vocab_size: undefined }, /vocab_size/);
  rejects({ ...QWEN3_06B, num_key_value_heads: 3 }, /num_attention_heads 16 is not a multiple of num_key_value_heads 3/);
  rejects({ ...QWEN25_05B, hidden_size: 900 }, /hidden_size 900 is not a multiple of num_attention_heads 14/);
  rejects({ ...LLAMA32_1B, rope_scaling: { rope_type: 'yarn', factor: 4 } }, /rope_scaling.rope_type "yarn" is not supported/);
  rejects({ ...LLAMA32_1B, rope_scaling: { type: 'dynamic', factor: 4 } }, /rope_scaling.type "dynamic" is not supported/);
  rejects({ ...LLAMA32_1B, rope_scaling: { rope_type: 'llama3', factor: 8 } }, /rope_scaling.low_freq_factor is required/);
  rejects({ ...LLAMA32_1B, rope_scaling: { rope_type: 'linear' } }, /rope_scaling.factor is required/);
  rejects({ ...LLAMA32_1B, hidden_act: 'gelu' }, /hidden_act "gelu"/);
  rejects({ ...QWEN25_05B, use_sliding_window: true }, /use_sliding_window/);
  rejects({ ...QWEN3_06B, eos_token_id: 'x' }, /eos_token_id/);
  rejects({ ...QWEN3_06B, tie_word_embeddings: 'yes' }, /tie_word_embeddings/);
});

/** A tiny Qwen3-shaped checkpoint built in the test itself: default tokenizer, seeded random weights. */
import { Rng } from '../../src/core/random.ts';
import type { SaveCheckpointInput } from '../../src/model/checkpoint.ts';
import { expectedTensorShapes } from '../../src/model/checkpoint-shapes.ts';
import type { TensorMap } from '../../src/model/safetensors.ts';
import { trainDefaultTokenizer } from '../../src/model/tokenizer/default-tokenizer.ts';
import { tokenizerFromJson } from '../../src/model/tokenizer/tokenizer.ts';

export function tinyCheckpoint(overrides: Record<string, unknown> = {}): SaveCheckpointInput {
  const files = trainDefaultTokenizer(['Your hand: 12. Dealer shows 10. Hit or stick?'.repeat(3)], { vocabSize: 300 });
  const vocab = tokenizerFromJson(files.tokenizerJson, files.tokenizerConfig).vocabSize;
  const configJson: Record<string, unknown> = {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    vocab_size: vocab,
    hidden_size: 8,
    intermediate_size: 16,
    num_hidden_layers: 2,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    head_dim: 4,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    max_position_embeddings: 256,
    tie_word_embeddings: true,
    ...overrides,
  };
  const rng = new Rng(7);
  const tensors: TensorMap = {};
  for (const [name, shape] of Object.entries(expectedTensorShapes(configJson))) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1)).map(() => rng.normal() * 0.02);
    tensors[name] = { dtype: 'F32', shape, data };
  }
  const eos = tokenizerFromJson(files.tokenizerJson, files.tokenizerConfig).eosTokenId!;
  return {
    configJson,
    tensors,
    tokenizerJson: files.tokenizerJson,
    tokenizerConfig: files.tokenizerConfig,
    generationConfig: { eos_token_id: [eos, eos - 2], temperature: 0.7, top_p: 0.8, top_k: 20 },
  };
}

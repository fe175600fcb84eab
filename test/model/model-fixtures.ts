/** Tiny configs and strongly random parameters for model tests (init-scale weights give near-uniform logits, a weak oracle). */
import { Rng } from '../../src/core/random.ts';
import { parseModelConfig, type ModelConfig } from '../../src/model/config.ts';
import { paramShapes, type HostParams } from '../../src/model/params.ts';

export function tinyConfig(modelType: 'llama' | 'qwen2' | 'qwen3', extra: Record<string, unknown> = {}): ModelConfig {
  return parseModelConfig({
    model_type: modelType,
    vocab_size: 37,
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: modelType === 'qwen3' ? 8 : undefined,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: modelType !== 'llama',
    ...extra,
  });
}

export function randomHostParams(cfg: ModelConfig, seed: number, std = 0.3): HostParams {
  const rng = new Rng(seed);
  const out: HostParams = {};
  for (const [name, shape] of Object.entries(paramShapes(cfg))) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const isNorm = name.endsWith('norm.weight');
    for (let i = 0; i < data.length; i++) data[i] = isNorm ? 1 + 0.2 * rng.normal() : std * rng.normal();
    out[name] = { shape, data };
  }
  return out;
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} != ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

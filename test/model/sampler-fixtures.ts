/** A tiny model with strongly random weights (peaked, varied distributions) for the sampler tests. */
import { Rng } from '../../src/core/random.ts';
import { parseModelConfig, type ModelConfig } from '../../src/model/config.ts';
import { np, tree } from '../../src/model/engine.ts';
import { paramShapes, toParams, type HostParams, type Params } from '../../src/model/params.ts';
import { forwardInputs, forwardLogits } from '../../src/model/transformer.ts';

/** Qwen3-style (GQA 4/2, q/k norm, tied head), vocabulary 37, context 256. */
export function samplerConfig(extra: Record<string, unknown> = {}): ModelConfig {
  return parseModelConfig({
    model_type: 'qwen3',
    vocab_size: 37,
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 8,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: true,
    max_position_embeddings: 256,
    ...extra,
  });
}

export function samplerParams(cfg: ModelConfig, seed = 3, std = 0.3): Params {
  const rng = new Rng(seed);
  const host: HostParams = {};
  for (const [name, shape] of Object.entries(paramShapes(cfg))) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const isNorm = name.endsWith('norm.weight');
    for (let i = 0; i < data.length; i++) data[i] = isNorm ? 1 + 0.2 * rng.normal() : std * rng.normal();
    host[name] = { shape, data };
  }
  return toParams(host);
}

/** Deterministic token lists: a shared "system prompt" and varied tails. */
export function tokens(length: number, seed: number, vocab = 37): number[] {
  const rng = new Rng(seed, 11);
  return Array.from({ length }, () => rng.int(vocab));
}

/** Logits of the last position of `ids` by the full (uncached) forward. Borrows params. */
export async function lastLogits(cfg: ModelConfig, params: Params, ids: number[]): Promise<Float32Array> {
  const { rope, mask } = forwardInputs(cfg, ids.length);
  const logits = forwardLogits(cfg, tree.ref(params), np.array(Int32Array.from(ids), { dtype: np.int32 }).reshape([1, ids.length]), rope, mask);
  const data = (await logits.data()) as Float32Array;
  return data.slice((ids.length - 1) * cfg.vocabSize);
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} != ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

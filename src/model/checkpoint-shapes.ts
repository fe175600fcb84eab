/**
 * The tensors a model config implies, with Hugging Face names and shapes (Linear weights are
 * [out, in]), as transformers' Llama / Qwen2 / Qwen3 modeling code creates them. The config itself
 * is parsed by the model's own `parseModelConfig`, so a checkpoint that loads is one the forward runs.
 */
import { parseModelConfig, type ModelConfig } from './config.ts';

export type TensorShapes = Record<string, number[]>;

/** Tensor names and shapes of a parsed ModelConfig. */
export function tensorShapesFor(cfg: ModelConfig): TensorShapes {
  const { vocabSize: vocab, hiddenSize: d, intermediateSize: inter, numHeads: heads, numKvHeads: kvHeads, headDim } = cfg;
  const shapes: TensorShapes = { 'model.embed_tokens.weight': [vocab, d] };
  for (let i = 0; i < cfg.numLayers; i++) {
    const p = `model.layers.${i}`;
    shapes[`${p}.input_layernorm.weight`] = [d];
    shapes[`${p}.self_attn.q_proj.weight`] = [heads * headDim, d];
    shapes[`${p}.self_attn.k_proj.weight`] = [kvHeads * headDim, d];
    shapes[`${p}.self_attn.v_proj.weight`] = [kvHeads * headDim, d];
    shapes[`${p}.self_attn.o_proj.weight`] = [d, heads * headDim];
    if (cfg.qkvBias) {
      shapes[`${p}.self_attn.q_proj.bias`] = [heads * headDim];
      shapes[`${p}.self_attn.k_proj.bias`] = [kvHeads * headDim];
      shapes[`${p}.self_attn.v_proj.bias`] = [kvHeads * headDim];
    }
    if (cfg.oBias) shapes[`${p}.self_attn.o_proj.bias`] = [d];
    if (cfg.qkNorm) {
      shapes[`${p}.self_attn.q_norm.weight`] = [headDim];
      shapes[`${p}.self_attn.k_norm.weight`] = [headDim];
    }
    shapes[`${p}.post_attention_layernorm.weight`] = [d];
    shapes[`${p}.mlp.gate_proj.weight`] = [inter, d];
    shapes[`${p}.mlp.up_proj.weight`] = [inter, d];
    shapes[`${p}.mlp.down_proj.weight`] = [d, inter];
    if (cfg.mlpBias) {
      shapes[`${p}.mlp.gate_proj.bias`] = [inter];
      shapes[`${p}.mlp.up_proj.bias`] = [inter];
      shapes[`${p}.mlp.down_proj.bias`] = [d];
    }
  }
  shapes['model.norm.weight'] = [d];
  if (!cfg.tieWordEmbeddings) shapes['lm_head.weight'] = [vocab, d];
  return shapes;
}

/** Expected tensors of a config.json object; throws a UsageError naming the config field that is wrong. */
export function expectedTensorShapes(configJson: Record<string, unknown>, label = 'config.json'): TensorShapes {
  return tensorShapesFor(parseModelConfig(configJson, label));
}

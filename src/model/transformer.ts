/**
 * The full decoder: token embedding, the layers, final RMSNorm, LM head (tied or not). Pure
 * functions of (params, tokens, rope tables, mask), so they run eagerly, under jit, and under grad.
 */
import type { ModelConfig } from './config.ts';
import { nn, np, type Tensor } from './engine.ts';
import { causalMask, decoderLayer, gradBarrier, linear, rmsNorm } from './layers.ts';
import { applyLora, loraLayerProjections, loraNeedsInline, type LoraRuntime } from './lora.ts';
import { layerParams, type Params } from './params.ts';
import { ropeTables, type RopeTables } from './rope.ts';

/**
 * Vocabulary size above which the embedding is a gather (backward: scatter-add) rather than a
 * one-hot matmul. Measured on the training step, 1 thread: equal at V = 512 (the matmul also splits
 * across threads, the scatter does not), gather 11% faster at V = 2,048 (the one-hot matmul costs
 * V·d per token, forward and backward).
 */
export const GATHER_EMBEDDING_MIN_VOCAB = 1024;

/** Token embedding: [B, T] int32 -> [B, T, d], differentiable under jit either way. */
export function embedTokens(embed: Tensor, tokens: Tensor): Tensor {
  const vocab = embed.shape[0];
  if (vocab > GATHER_EMBEDDING_MIN_VOCAB) return gradBarrier(np.take(embed, tokens, 0));
  return gradBarrier(np.matmul(nn.oneHot(tokens, vocab), embed));
}

/** Final norm and LM head: hidden [B, T, d] -> logits [B, T, V]. Consumes the arrays it reads from params. */
export function lmHead(cfg: ModelConfig, params: Params, hidden: Tensor): Tensor {
  const h = rmsNorm(hidden, params['model.norm.weight'], cfg.rmsNormEps);
  return linear(h, cfg.tieWordEmbeddings ? params['model.embed_tokens.weight'] : params['lm_head.weight']);
}

/**
 * Hidden states after the last layer (before the final norm). Consumes params (all of them but the
 * head's), tokens, rope, mask. `lora` runs the layers' adapters in their projections (dropout).
 */
export function decoderHidden(
  cfg: ModelConfig,
  params: Params,
  tokens: Tensor,
  rope: RopeTables,
  mask: Tensor | undefined,
  lora?: LoraRuntime,
): Tensor {
  const adapters = lora ? loraLayerProjections(cfg, lora) : null;
  const embed = params['model.embed_tokens.weight'];
  let x = embedTokens(cfg.tieWordEmbeddings ? embed.ref : embed, tokens);
  for (let i = 0; i < cfg.numLayers; i++) {
    const last = i === cfg.numLayers - 1;
    const layerRope = last ? rope : { cos: rope.cos.ref, sin: rope.sin.ref };
    const layerMask = mask && !last ? mask.ref : mask;
    const out = decoderLayer(cfg, { ...layerParams(params, i), lora: adapters?.[i] }, x, layerRope, layerMask);
    out.k.dispose();
    out.v.dispose();
    x = out.x;
  }
  return x;
}

/**
 * Logits [B, T, V] for tokens [B, T] (int32). rope and mask come from `forwardInputs` (or the
 * caller's own positions / packing mask). With `lora`, params are the frozen base and the adapters
 * are added: as merged weights W + s·B·A, or inside the projections when dropout is drawn (a key
 * and dropout > 0). Consumes every argument array.
 */
export function forwardLogits(cfg: ModelConfig, params: Params, tokens: Tensor, rope: RopeTables, mask: Tensor | undefined, lora?: LoraRuntime): Tensor {
  if (lora && !loraNeedsInline(lora)) {
    lora.key?.dispose();
    return forwardLogits(cfg, applyLora(cfg, lora.config, params, lora.adapters), tokens, rope, mask);
  }
  return lmHead(cfg, params, decoderHidden(cfg, params, tokens, rope, mask, lora));
}

/** Rope tables for positions 0..T-1 and the causal mask: the inputs of an unpacked forward. */
export function forwardInputs(cfg: ModelConfig, length: number): { rope: RopeTables; mask: Tensor } {
  const positions = Array.from({ length }, (_, t) => t);
  return { rope: ropeTables(cfg, positions), mask: causalMask(length) };
}

/**
 * The full decoder: token embedding, the layers, final RMSNorm, LM head (tied or not). Pure
 * functions of (params, tokens, rope tables, mask), so they run eagerly, under jit, and under grad.
 */
import type { ModelConfig } from './config.ts';
import { nn, np, type Tensor } from './engine.ts';
import { causalMask, decoderLayer, gradBarrier, linear, rmsNorm } from './layers.ts';
import { layerParams, type Params } from './params.ts';
import { ropeTables, type RopeTables } from './rope.ts';

/**
 * Token embedding as a one-hot matmul: [B, T] int32 -> [B, T, d]. Differentiable under jit
 * (jax-js 0.1.25's gather/scatter fails there), and on a small vocabulary just as fast.
 */
export function embedTokens(embed: Tensor, tokens: Tensor): Tensor {
  const vocab = embed.shape[0];
  return gradBarrier(np.matmul(nn.oneHot(tokens, vocab), embed));
}

/** Final norm and LM head: hidden [B, T, d] -> logits [B, T, V]. Consumes the arrays it reads from params. */
export function lmHead(cfg: ModelConfig, params: Params, hidden: Tensor): Tensor {
  const h = rmsNorm(hidden, params['model.norm.weight'], cfg.rmsNormEps);
  return linear(h, cfg.tieWordEmbeddings ? params['model.embed_tokens.weight'] : params['lm_head.weight']);
}

/** Hidden states after the last layer (before the final norm). Consumes params (all of them but the head's), tokens, rope, mask. */
export function decoderHidden(cfg: ModelConfig, params: Params, tokens: Tensor, rope: RopeTables, mask: Tensor | undefined): Tensor {
  const embed = params['model.embed_tokens.weight'];
  let x = embedTokens(cfg.tieWordEmbeddings ? embed.ref : embed, tokens);
  for (let i = 0; i < cfg.numLayers; i++) {
    const last = i === cfg.numLayers - 1;
    const layerRope = last ? rope : { cos: rope.cos.ref, sin: rope.sin.ref };
    const layerMask = mask && !last ? mask.ref : mask;
    const out = decoderLayer(cfg, layerParams(params, i), x, layerRope, layerMask);
    out.k.dispose();
    out.v.dispose();
    x = out.x;
  }
  return x;
}

/**
 * Logits [B, T, V] for tokens [B, T] (int32). rope and mask come from `forwardInputs` (or the
 * caller's own positions / packing mask). Consumes every argument array.
 */
export function forwardLogits(cfg: ModelConfig, params: Params, tokens: Tensor, rope: RopeTables, mask: Tensor | undefined): Tensor {
  return lmHead(cfg, params, decoderHidden(cfg, params, tokens, rope, mask));
}

/** Rope tables for positions 0..T-1 and the causal mask: the inputs of an unpacked forward. */
export function forwardInputs(cfg: ModelConfig, length: number): { rope: RopeTables; mask: Tensor } {
  const positions = Array.from({ length }, (_, t) => t);
  return { rope: ropeTables(cfg, positions), mask: causalMask(length) };
}

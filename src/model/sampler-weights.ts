/**
 * The weights as generation reads them: per layer, q/k/v stacked into one [(Hq + 2 Hkv) hd, d]
 * matrix and gate/up into one [2 I, d], so a decode step runs 2 matmuls where it would run 5.
 * Every engine kernel costs ~16 µs to dispatch (~45 µs through the 2-thread worker pool), which at
 * one token per row is as much as the arithmetic. Built once per weights version; the rows of the
 * stacked matrices are the original rows, so each output is the same dot product as before.
 */
import type { ModelConfig } from './config.ts';
import { np, type Tensor } from './engine.ts';
import { layerParams, type Params } from './params.ts';

export type FusedLayer = {
  inputNorm: Tensor;
  qkv: Tensor;
  qkvBias?: Tensor;
  qNorm?: Tensor;
  kNorm?: Tensor;
  oProj: Tensor;
  oBias?: Tensor;
  postNorm: Tensor;
  gateUp: Tensor;
  gateUpBias?: Tensor;
  downProj: Tensor;
  downBias?: Tensor;
};

export type GenerationWeights = {
  embed: Tensor;
  finalNorm: Tensor;
  /** The LM head [V, d] (the embedding itself when tied). */
  head: Tensor;
  layers: FusedLayer[];
};

/** Builds the fused weights; borrows `params` (they stay the caller's). */
export function fuseWeights(cfg: ModelConfig, params: Params): GenerationWeights {
  const layers: FusedLayer[] = [];
  for (let i = 0; i < cfg.numLayers; i++) {
    const p = layerParams(params, i);
    const layer: FusedLayer = {
      inputNorm: p.inputNorm.ref,
      qkv: np.concatenate([p.qProj.ref, p.kProj.ref, p.vProj.ref], 0),
      oProj: p.oProj.ref,
      postNorm: p.postNorm.ref,
      gateUp: np.concatenate([p.gateProj.ref, p.upProj.ref], 0),
      downProj: p.downProj.ref,
    };
    if (p.qBias && p.kBias && p.vBias) layer.qkvBias = np.concatenate([p.qBias.ref, p.kBias.ref, p.vBias.ref], 0);
    if (p.qNorm && p.kNorm) {
      layer.qNorm = p.qNorm.ref;
      layer.kNorm = p.kNorm.ref;
    }
    if (p.oBias) layer.oBias = p.oBias.ref;
    if (p.gateBias && p.upBias) layer.gateUpBias = np.concatenate([p.gateBias.ref, p.upBias.ref], 0);
    if (p.downBias) layer.downBias = p.downBias.ref;
    layers.push(layer);
  }
  const embed = params['model.embed_tokens.weight'];
  return {
    embed: embed.ref,
    finalNorm: params['model.norm.weight'].ref,
    head: cfg.tieWordEmbeddings ? embed.ref : params['lm_head.weight'].ref,
    layers,
  };
}

export function disposeWeights(w: GenerationWeights): void {
  w.embed.dispose();
  w.finalNorm.dispose();
  w.head.dispose();
  for (const layer of w.layers) for (const t of Object.values(layer)) t.dispose();
}

/** A reference to every array (for a jit call, which consumes its inputs). */
export function refWeights(w: GenerationWeights): GenerationWeights {
  return {
    embed: w.embed.ref,
    finalNorm: w.finalNorm.ref,
    head: w.head.ref,
    layers: w.layers.map((layer) => Object.fromEntries(Object.entries(layer).map(([k, t]) => [k, t.ref])) as FusedLayer),
  };
}

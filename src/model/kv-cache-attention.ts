/**
 * A decoder layer that reads its past keys and values from KV-cache blocks instead of recomputing
 * them: the same math as `decoderLayer` (src/model/layers.ts), built from the same blocks, except
 * that the keys are [past blocks..., this chunk] and only this chunk's keys/values are returned.
 *
 * Blocks are [b, Hkv, S_i, hd] with b either the batch B or 1 (a block shared by every row, e.g. a
 * cached system prompt); they are never copied into one big array. Scores are computed per block,
 * joined on the key axis (small: [B, Hkv, G*C, ΣS]), soft-maxed once, and the value sums are added:
 *   softmax([q k_1ᵀ, …, q k_nᵀ] / √hd + mask) [v_1; …; v_n]  =  Σ_i p_i v_i
 */
import type { ModelConfig } from './config.ts';
import { np, nn, type Tensor } from './engine.ts';
import { linear, mergeHeads, rmsNorm, selfAttentionQkv, swiglu, type LayerParams } from './layers.ts';
import type { RopeTables } from './rope.ts';

export type KvBlock = { k: Tensor; v: Tensor };

/**
 * q [B, Hq, C, hd]; blocks [b, Hkv, S_i, hd] (b = B or 1); mask additive, broadcastable to
 * [B, 1, C, ΣS_i]. Returns [B, Hq, C, hd]. Consumes q, every block and mask.
 */
export function blockAttention(q: Tensor, blocks: KvBlock[], mask: Tensor): Tensor {
  const [B, Hq, C, hd] = q.shape;
  const Hkv = blocks[0].k.shape[1];
  const group = Hq / Hkv;
  // GQA: fold each kv head's query group into the query axis, as layers.ts attention does.
  const qg = q.reshape([B, Hkv, group * C, hd]).mul(1 / Math.sqrt(hd));
  const last = blocks.length - 1;
  const parts = blocks.map((b, i) => np.matmul(i === last ? qg : qg.ref, b.k.transpose([0, 1, 3, 2])));
  const total = parts.reduce((n, s) => n + s.shape[3], 0);
  let scores = parts.length === 1 ? parts[0] : np.concatenate(parts, 3);
  // One query per row (decode): the mask [B, 1, 1, S] broadcasts over heads and groups as is.
  scores =
    C === 1
      ? scores.add(mask)
      : scores.reshape([B, Hkv, group, C, total]).add(np.expandDims(mask, 2)).reshape([B, Hkv, group * C, total]);
  const probs = nn.softmax(scores, -1);
  let out: Tensor | null = null;
  let offset = 0;
  blocks.forEach((b, i) => {
    const width = b.v.shape[2];
    const p = i === last ? probs.slice([], [], [], [offset, offset + width]) : probs.ref.slice([], [], [], [offset, offset + width]);
    const term = np.matmul(p, b.v);
    out = out === null ? term : out.add(term);
    offset += width;
  });
  if (blocks.length === 0) probs.dispose();
  return (out as unknown as Tensor).reshape([B, Hq, C, hd]);
}

/**
 * Pre-norm decoder layer over cached blocks: x [B, C, d] is a chunk of C new tokens, `past` the
 * layer's cached blocks, `mask` additive over [past..., chunk] (broadcastable to [B, 1, C, ΣS + C]).
 * Returns the new hidden state and the chunk's keys (after RoPE) and values [B, Hkv, C, hd].
 * Consumes p, x, rope, past and mask.
 */
export function cachedDecoderLayer(
  cfg: ModelConfig,
  p: LayerParams,
  x: Tensor,
  rope: RopeTables,
  past: KvBlock[],
  mask: Tensor,
): { x: Tensor; k: Tensor; v: Tensor } {
  const h = rmsNorm(x.ref, p.inputNorm, cfg.rmsNormEps);
  const { q, k, v } = selfAttentionQkv(cfg, p, h, rope);
  const attn = mergeHeads(blockAttention(q, [...past, { k: k.ref, v: v.ref }], mask));
  const x1 = x.add(linear(attn, p.oProj, p.oBias));
  const mlpBias = p.gateBias && p.upBias && p.downBias ? { gate: p.gateBias, up: p.upBias, down: p.downBias } : undefined;
  const mlp = swiglu(rmsNorm(x1.ref, p.postNorm, cfg.rmsNormEps), p.gateProj, p.upProj, p.downProj, mlpBias);
  return { x: x1.add(mlp), k, v };
}

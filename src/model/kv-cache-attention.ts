/**
 * Decoder layers that read their past keys and values from KV-cache blocks instead of recomputing
 * them: the same math as `decoderLayer` (src/model/layers.ts), built from its blocks, on the fused
 * weights of sampler-weights.ts; only the new tokens' keys/values are produced.
 *
 * Blocks are [b, Hkv, S_i, hd] with b either the batch B or 1 (a block shared by every row, e.g. a
 * cached system prompt); they are not concatenated into one array. Scores are computed per block,
 * joined on the key axis (small: [B, Hkv, G*C, ΣS]), soft-maxed once, and the value sums are added:
 *   softmax([q k_1ᵀ, …, q k_nᵀ] / √hd + mask) [v_1; …; v_n]  =  Σ_i p_i v_i
 */
import type { ModelConfig } from './config.ts';
import { nn, np, type Tensor } from './engine.ts';
import { linear, materialize, mergeHeads, rmsNorm, splitHeads } from './layers.ts';
import { applyRope, type RopeTables } from './rope.ts';
import type { FusedLayer } from './sampler-weights.ts';

export type KvBlock = { k: Tensor; v: Tensor };

/**
 * A contiguous copy of a transposed view. jax-js's jit keeps views (transpose, reshape) as index
 * expressions inside the consuming matmul; when the view permutes the reduction axis, the matmul's
 * inner loop computes a div/mod gather per element and runs ~25x slower (46 ms instead of 1.8 ms
 * for o_proj on [32, 32, 128] after merging heads). A non-view op in between makes the jit write the
 * view out once. (`mul(1)` and `add(0)` are simplified away; a double negation is exact and kept.)
 */
export function contiguous(x: Tensor): Tensor {
  return x.neg().neg();
}

/**
 * q [B, Hq, C, hd]; blocks (at least one) [b, Hkv, S_i, hd] (b = B or 1); mask additive,
 * broadcastable to [B, 1, C, ΣS_i]. Returns [B, Hq, C, hd]. Consumes q, every block and mask.
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
  // softmax, with the division moved after the value sums (one fewer kernel over the scores):
  // Σ_i softmax(s)_i v_i = (Σ_i e^(s_i - m) v_i) / Σ_i e^(s_i - m)
  const max = scores.ref.max(-1, { keepdims: true });
  const weights = np.exp(scores.sub(max));
  const denom = weights.ref.sum(-1, { keepdims: true });
  let offset = 0;
  const sums = blocks.map((b, i) => {
    const width = b.v.shape[2];
    const w = (i === last ? weights : weights.ref).slice([], [], [], [offset, offset + width]);
    offset += width;
    return np.matmul(w, b.v);
  });
  return sums
    .reduce((a, t) => a.add(t))
    .div(denom)
    .reshape([B, Hq, C, hd]);
}

/**
 * Attention inputs from the normed hidden state with fused weights: one matmul for q, k and v,
 * heads split, q/k RMSNorm (qwen3), RoPE. Same math as layers.ts `selfAttentionQkv`.
 * Consumes xNormed, rope and the layer arrays it reads (qkv, qkvBias, qNorm, kNorm).
 */
function qkvHeads(cfg: ModelConfig, lp: FusedLayer, xNormed: Tensor, rope: RopeTables): { q: Tensor; k: Tensor; v: Tensor } {
  const qWidth = cfg.numHeads * cfg.headDim;
  const kvWidth = cfg.numKvHeads * cfg.headDim;
  const qkv = linear(xNormed, lp.qkv, lp.qkvBias);
  let q = splitHeads(qkv.ref.slice([], [], [0, qWidth]), cfg.numHeads);
  let k = splitHeads(qkv.ref.slice([], [], [qWidth, qWidth + kvWidth]), cfg.numKvHeads);
  const v = splitHeads(qkv.slice([], [], [qWidth + kvWidth, qWidth + 2 * kvWidth]), cfg.numKvHeads);
  if (lp.qNorm && lp.kNorm) {
    q = rmsNorm(q, lp.qNorm, cfg.rmsNormEps);
    k = rmsNorm(k, lp.kNorm, cfg.rmsNormEps);
  }
  q = applyRope(q, rope.cos.ref, rope.sin.ref);
  k = applyRope(k, rope.cos, rope.sin);
  return { q, k, v };
}

/** x + o_proj(attn), then + down(silu(gate) * up) of its norm. Consumes x, attn and the rest of the layer. */
function finishLayer(cfg: ModelConfig, lp: FusedLayer, x: Tensor, attn: Tensor): Tensor {
  const x1 = x.add(linear(attn, lp.oProj, lp.oBias));
  const I = cfg.intermediateSize;
  const gateUp = linear(rmsNorm(x1.ref, lp.postNorm, cfg.rmsNormEps), lp.gateUp, lp.gateUpBias);
  const gate = gateUp.ref.slice([], [], [0, I]);
  const up = gateUp.slice([], [], [I, 2 * I]);
  return x1.add(linear(nn.silu(gate).mul(up), lp.downProj, lp.downBias));
}

/**
 * Prefill layer: x [B, C, d] is a chunk of C new tokens, `past` the layer's cached blocks (shared
 * prefix), `mask` additive over [past..., chunk] (broadcastable to [B, 1, C, ΣS + C]). Returns the
 * new hidden state and the chunk's keys (after RoPE) and values [B, Hkv, C, hd].
 * Consumes lp, x, rope, past and mask.
 */
export function prefillLayer(
  cfg: ModelConfig,
  lp: FusedLayer,
  x: Tensor,
  rope: RopeTables,
  past: KvBlock[],
  mask: Tensor,
): { x: Tensor; k: Tensor; v: Tensor } {
  const { q, k, v } = qkvHeads(cfg, lp, rmsNorm(x.ref, lp.inputNorm, cfg.rmsNormEps), rope);
  const merged = mergeHeads(blockAttention(q, [...past, { k: k.ref, v: v.ref }], mask));
  // With C > 1 the head merge is a transpose; see `contiguous`.
  const attn = x.shape[1] > 1 ? contiguous(merged) : merged;
  return { x: finishLayer(cfg, lp, x, attn), k, v };
}

/** block [B, Hkv, K, hd] with slot s (one-hot [1, 1, K, 1]) replaced by value [B, Hkv, 1, hd]. Consumes all three. */
function writeSlot(block: Tensor, value: Tensor, slot: Tensor): Tensor {
  return np.where(slot.greater(0.5), value, block);
}

/**
 * Decode layer: x [B, 1, d], one new token per row. Its key and value are written into the open
 * block at the slot `slot` marks ([1, 1, K, 1] one-hot), then the token attends to the closed
 * blocks and the updated open block (`mask` [B, 1, 1, ΣS] includes the slot).
 * Returns the new hidden state and the updated open block. Consumes every argument but slot.
 */
export function decodeLayer(
  cfg: ModelConfig,
  lp: FusedLayer,
  x: Tensor,
  rope: RopeTables,
  closed: KvBlock[],
  open: KvBlock,
  slot: Tensor,
  mask: Tensor,
): { x: Tensor; open: KvBlock } {
  const { q, k, v } = qkvHeads(cfg, lp, rmsNorm(x.ref, lp.inputNorm, cfg.rmsNormEps), rope);
  // v is a plain slice of the projection (cheap to re-read per slot); k carries its norm and RoPE.
  // k computed once (materialize): fed straight into writeSlot's broadcasting where(), its projection
  // slice, q/k norm and RoPE would be recomputed for every slot of the block (4x slower at K = 64).
  const written = { k: writeSlot(open.k, materialize(k), slot.ref), v: writeSlot(open.v, v, slot.ref) };
  const attn = mergeHeads(blockAttention(q, [...closed, { k: written.k.ref, v: written.v.ref }], mask));
  return { x: finishLayer(cfg, lp, x, attn), open: written };
}

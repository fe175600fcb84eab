/**
 * The transformer's building blocks (Llama / Qwen2 / Qwen3). Hidden states are [B, T, d]; per-head
 * tensors are [B, H, T, headDim]. Every function consumes the arrays it is given (jax-js ownership:
 * pass `x.ref` to keep one) and returns arrays the caller owns.
 */
import type { ModelConfig } from './config.ts';
import { nn, np, random, type Tensor } from './engine.ts';
import { applyRope, type RopeTables } from './rope.ts';

/** Additive mask value for blocked keys: large enough to vanish in softmax, finite so no NaN appears. */
export const MASKED = -1e9;

/** RMSNorm: x / sqrt(mean(x²) + eps) * weight, over the last axis. */
export function rmsNorm(x: Tensor, weight: Tensor, eps: number): Tensor {
  const meanSquare = np.square(x.ref).mean(-1, { keepdims: true });
  return x.mul(np.reciprocal(np.sqrt(meanSquare.add(eps)))).mul(weight);
}

/**
 * Identity whose gradient is computed into its own buffer. jax-js's jit fuses elementwise work into
 * the matmul that consumes it; in the backward pass a matmul's output gradient is broadcast over the
 * other operand's width, so without this the whole elementwise chain producing it is recomputed
 * per column (measured: 1.9 s of a 2.9 s step). The forward is a view (free); the backward of the
 * broadcast is a reduce over a size-1 axis, which jit always materialises.
 */
export function gradBarrier(x: Tensor): Tensor {
  const shape = x.shape;
  return np.broadcastTo(x, [1, ...shape]).reshape(shape);
}

/**
 * Identity that jit computes into its own buffer: a reduce over a size-1 axis is never fused away,
 * so an expression feeding a matmul or a broadcasting where() is not recomputed inside it.
 */
export function materialize(x: Tensor): Tensor {
  return np.expandDims(x, -1).sum(-1);
}

/**
 * A LoRA adapter applied inside a projection (PEFT's unmerged form), for training with dropout:
 * y = W x + scale · B A dropout(x). `key` (a jax-js PRNG key) draws the dropout mask.
 */
export type LoraProjection = { a: Tensor; b: Tensor; scale: number; dropout: number; key?: Tensor };

/** x @ wᵀ (+ b) (+ a LoRA adapter's low-rank term), with w in Hugging Face's [out, in] layout. */
export function linear(x: Tensor, w: Tensor, b?: Tensor, lora?: LoraProjection): Tensor {
  let y = gradBarrier(np.matmul(lora ? x.ref : x, w.transpose()));
  if (b) y = y.add(b);
  if (!lora) return y;
  let input = x;
  if (lora.key && lora.dropout > 0) {
    const keep = random.bernoulli(lora.key, 1 - lora.dropout, x.shape).astype(np.float32);
    input = x.mul(keep).mul(1 / (1 - lora.dropout));
  } else {
    lora.key?.dispose();
  }
  const low = gradBarrier(np.matmul(gradBarrier(np.matmul(input, lora.a.transpose())), lora.b.transpose()));
  return y.add(low.mul(lora.scale));
}

/** SwiGLU MLP: down(silu(x gateᵀ) * (x upᵀ)). */
export function swiglu(
  x: Tensor,
  gate: Tensor,
  up: Tensor,
  down: Tensor,
  bias?: { gate: Tensor; up: Tensor; down: Tensor },
  lora?: { gate?: LoraProjection; up?: LoraProjection; down?: LoraProjection },
): Tensor {
  const g = nn.silu(linear(x.ref, gate, bias?.gate, lora?.gate));
  const u = linear(x, up, bias?.up, lora?.up);
  return linear(g.mul(u), down, bias?.down, lora?.down);
}

/** [B, T, H*hd] -> [B, H, T, hd] */
export function splitHeads(x: Tensor, heads: number): Tensor {
  const [B, T, width] = x.shape;
  return x.reshape([B, T, heads, width / heads]).transpose([0, 2, 1, 3]);
}

/** [B, H, T, hd] -> [B, T, H*hd] */
export function mergeHeads(x: Tensor): Tensor {
  const [B, H, T, hd] = x.shape;
  return x.transpose([0, 2, 1, 3]).reshape([B, T, H * hd]);
}

/**
 * softmax(q kᵀ / √hd + mask) v with grouped-query attention: query head h reads kv head
 * floor(h / (Hq / Hkv)). q [B, Hq, T, hd], k and v [B, Hkv, S, hd], mask additive and broadcastable
 * to [B, 1, T, S] (0 keeps a key, MASKED drops it). Returns [B, Hq, T, hd].
 */
export function attention(q: Tensor, k: Tensor, v: Tensor, mask?: Tensor, options: { causal?: boolean } = {}): Tensor {
  const [B, Hq, T, hd] = q.shape;
  if (options.causal && T > CAUSAL_QUERY_CHUNK) return causalChunkedAttention(q, k, v, mask, CAUSAL_QUERY_CHUNK);
  const Hkv = k.shape[1];
  const S = k.shape[2];
  const group = Hq / Hkv;
  if (!Number.isInteger(group)) throw new Error(`attention: ${Hq} query heads are not a multiple of ${Hkv} kv heads`);
  // Fold each kv head's query group into its time axis, so k and v are never repeated.
  const qg = group === 1 ? q : q.reshape([B, Hkv, group * T, hd]);
  let scores = np.matmul(qg, k.transpose([0, 1, 3, 2])).mul(1 / Math.sqrt(hd));
  if (mask) {
    scores = group === 1 ? scores.add(mask) : scores.reshape([B, Hkv, group, T, S]).add(np.expandDims(mask, 2)).reshape([B, Hkv, group * T, S]);
  }
  const out = np.matmul(nn.softmax(scores, -1), v);
  return group === 1 ? out : out.reshape([B, Hq, T, hd]);
}

/**
 * Queries per chunk of causalChunkedAttention. Training the default model
 * (`npm run bench -- model-train --config default --shapes 4x512,1x2048`), tokens/s unchunked →
 * chunked: one row of 2,048 tokens 659 → 1,037 at one thread, 1,238 → 1,600 at two; 4 rows of 512
 * 1,728 → 2,046 at one thread, 2,811 → 2,846 at two; 16 rows of 128 (one chunk) unchanged. Chunks
 * of 256 and 512 measured the same within the noise (±5 %).
 */
export const CAUSAL_QUERY_CHUNK = 128;

/**
 * attention() for causal inputs (query t sees no key past S - T + t: keys before the T queries are a
 * cache or a shared prefix), by query chunks: chunk [t0, t1) attends only to keys [0, S - T + t1),
 * so the masked blocks above the diagonal are never computed (about half of the scores of a long
 * row: the quadratic part of its cost). Each query's softmax is its own, so the result is the same
 * up to float rounding. Consumes q, k, v and mask.
 */
function causalChunkedAttention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | undefined, chunk: number): Tensor {
  const T = q.shape[2];
  const S = k.shape[2];
  const outs: Tensor[] = [];
  for (let t0 = 0; t0 < T; t0 += chunk) {
    const t1 = Math.min(T, t0 + chunk);
    const keys = S - T + t1;
    const last = t1 === T;
    // The chunk's queries in a buffer of their own. Left a slice, the RL layouts' forward
    // (rl-batch-forward.ts) had jit index the folded query group by a division over the score
    // matmul's reduction axis, which loses its SIMD loop: a median of 126 ms a call instead of 5-8 ms
    // on the bandit's 3 rows of 544 (one thread), and a bandit RL step trained in 24-32 s instead of
    // 16-21 s at two threads (docs/results.md, "Training speed on long rows").
    const qc = materialize(q.ref.slice([], [], [t0, t1], []));
    const kc = (last ? k : k.ref).slice([], [], [0, keys], []);
    const vc = (last ? v : v.ref).slice([], [], [0, keys], []);
    const mc = mask && (last ? mask : mask.ref).slice([], [], [t0, t1], [0, keys]);
    outs.push(attention(qc, kc, vc, mc));
  }
  q.dispose();
  return np.concatenate(outs, 2);
}

/** Additive causal mask [1, 1, T, S]: query t sees keys 0 .. offset + t (offset defaults to S - T, a cache of S - T tokens). */
export function causalMask(T: number, S = T, offset = S - T): Tensor {
  const data = new Float32Array(T * S);
  for (let t = 0; t < T; t++) for (let s = offset + t + 1; s < S; s++) data[t * S + s] = MASKED;
  return np.array(data).reshape([1, 1, T, S]);
}

/**
 * Additive mask [B, 1, T, T] for packed rows: query t sees key s when s <= t and both carry the
 * same segment id (several sequences share a row without seeing each other).
 */
export function packedCausalMask(segmentIds: ArrayLike<number>, batch: number, length: number): Tensor {
  const data = new Float32Array(batch * length * length);
  for (let b = 0; b < batch; b++) {
    for (let t = 0; t < length; t++) {
      const row = (b * length + t) * length;
      const seg = segmentIds[b * length + t];
      for (let s = 0; s < length; s++) {
        if (s > t || segmentIds[b * length + s] !== seg) data[row + s] = MASKED;
      }
    }
  }
  return np.array(data).reshape([batch, 1, length, length]);
}

/** One decoder layer's weights, short names for the Hugging Face tensors under `model.layers.{i}.`. */
export type LayerParams = {
  inputNorm: Tensor;
  qProj: Tensor;
  kProj: Tensor;
  vProj: Tensor;
  oProj: Tensor;
  qBias?: Tensor;
  kBias?: Tensor;
  vBias?: Tensor;
  oBias?: Tensor;
  qNorm?: Tensor;
  kNorm?: Tensor;
  postNorm: Tensor;
  gateProj: Tensor;
  upProj: Tensor;
  downProj: Tensor;
  gateBias?: Tensor;
  upBias?: Tensor;
  downBias?: Tensor;
  /** LoRA adapters applied inside the projections (training with dropout); keyed by PEFT module name. */
  lora?: Partial<Record<'q_proj' | 'k_proj' | 'v_proj' | 'o_proj' | 'gate_proj' | 'up_proj' | 'down_proj', LoraProjection>>;
};

/** Short name -> Hugging Face suffix after `model.layers.{i}.` */
export const LAYER_TENSOR_NAMES: Record<Exclude<keyof LayerParams, 'lora'>, string> = {
  inputNorm: 'input_layernorm.weight',
  qProj: 'self_attn.q_proj.weight',
  kProj: 'self_attn.k_proj.weight',
  vProj: 'self_attn.v_proj.weight',
  oProj: 'self_attn.o_proj.weight',
  qBias: 'self_attn.q_proj.bias',
  kBias: 'self_attn.k_proj.bias',
  vBias: 'self_attn.v_proj.bias',
  oBias: 'self_attn.o_proj.bias',
  qNorm: 'self_attn.q_norm.weight',
  kNorm: 'self_attn.k_norm.weight',
  postNorm: 'post_attention_layernorm.weight',
  gateProj: 'mlp.gate_proj.weight',
  upProj: 'mlp.up_proj.weight',
  downProj: 'mlp.down_proj.weight',
  gateBias: 'mlp.gate_proj.bias',
  upBias: 'mlp.up_proj.bias',
  downBias: 'mlp.down_proj.bias',
};

/**
 * Attention inputs from the normed hidden state: projections (+ biases), heads split, q/k RMSNorm
 * (qwen3), RoPE. Returns q [B, Hq, T, hd] and k, v [B, Hkv, T, hd] (k after RoPE, ready to cache).
 */
export function selfAttentionQkv(
  cfg: ModelConfig,
  p: Pick<LayerParams, 'qProj' | 'kProj' | 'vProj' | 'qBias' | 'kBias' | 'vBias' | 'qNorm' | 'kNorm' | 'lora'>,
  xNormed: Tensor,
  rope: RopeTables,
): { q: Tensor; k: Tensor; v: Tensor } {
  let q = splitHeads(linear(xNormed.ref, p.qProj, p.qBias, p.lora?.q_proj), cfg.numHeads);
  let k = splitHeads(linear(xNormed.ref, p.kProj, p.kBias, p.lora?.k_proj), cfg.numKvHeads);
  const v = splitHeads(linear(xNormed, p.vProj, p.vBias, p.lora?.v_proj), cfg.numKvHeads);
  if (p.qNorm && p.kNorm) {
    q = rmsNorm(q, p.qNorm, cfg.rmsNormEps);
    k = rmsNorm(k, p.kNorm, cfg.rmsNormEps);
  }
  q = applyRope(q, rope.cos.ref, rope.sin.ref);
  k = applyRope(k, rope.cos, rope.sin);
  return { q, k, v };
}

/**
 * A pre-norm decoder layer: x + attn(norm(x)), then + mlp(norm(·)). With `past` (cached keys and
 * values [B, Hkv, P, hd]) the new keys/values are appended on the time axis; the full k and v are
 * returned for the cache. The mask must be causal (query t sees no key past P + t; packed rows may
 * hide more), which attention() uses to skip the blocks above the diagonal. Consumes p, x, rope,
 * mask and past.
 *
 * `materializeHeads`: compute the merged heads into their own buffer before o_proj. Without it jit
 * fuses the heads' transpose into o_proj's matmul as a gather, which costs a no-gradient forward
 * most of its time (16 × 128 rows of the default model, vocabulary 480, two threads: 430–470 ms
 * without, 125–190 ms with); inside valueAndGrad it changes nothing measurable, and it changes float
 * rounding (7th digit), so it is asked for only where a forward runs alone (frozen logprobs).
 */
export function decoderLayer(
  cfg: ModelConfig,
  p: LayerParams,
  x: Tensor,
  rope: RopeTables,
  mask: Tensor | undefined,
  past?: { k: Tensor; v: Tensor },
  options: { materializeHeads?: boolean } = {},
): { x: Tensor; k: Tensor; v: Tensor } {
  const h = rmsNorm(x.ref, p.inputNorm, cfg.rmsNormEps);
  const qkv = selfAttentionQkv(cfg, p, h, rope);
  const k = past ? np.concatenate([past.k, qkv.k], 2) : qkv.k;
  const v = past ? np.concatenate([past.v, qkv.v], 2) : qkv.v;
  const merged = mergeHeads(attention(qkv.q, k.ref, v.ref, mask, { causal: mask !== undefined }));
  const attn = options.materializeHeads ? materialize(merged) : merged;
  const x1 = x.add(linear(attn, p.oProj, p.oBias, p.lora?.o_proj));
  const mlpBias = p.gateBias && p.upBias && p.downBias ? { gate: p.gateBias, up: p.upBias, down: p.downBias } : undefined;
  const mlpLora = p.lora && { gate: p.lora.gate_proj, up: p.lora.up_proj, down: p.lora.down_proj };
  const mlp = swiglu(rmsNorm(x1.ref, p.postNorm, cfg.rmsNormEps), p.gateProj, p.upProj, p.downProj, mlpBias, mlpLora);
  return { x: x1.add(mlp), k, v };
}

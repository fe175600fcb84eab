/**
 * The compiled programs of generation:
 *   prefill: a chunk of C prompt tokens per row (right-padded), attending to shared cached blocks
 *            and causally to itself -> the chunk's keys/values and log p at each row's last token;
 *   decode:  one token per row, attending to the cache's blocks (kv-cache.ts) -> log p, with the
 *            token's key and value written into the open block at `slot` (a one-hot over its slots);
 *   merge:   a full open block copied into the cache's `past` at an offset.
 * Each is jit-compiled once per input shape signature; weights are inputs, not constants, so a
 * weight update needs no recompilation. Plain JS builds the small per-call inputs (rope rows, masks).
 */
import type { ModelConfig } from './config.ts';
import { jit, nn, np, type Tensor } from './engine.ts';
import { decodeLayer, prefillLayer, type KvBlock } from './kv-cache-attention.ts';
import { linear, rmsNorm } from './layers.ts';
import { ropeInvFreq, ropeTableData, type RopeTables } from './rope.ts';
import type { GenerationWeights } from './sampler-weights.ts';

/** Rope tables [B, 1, C, hd] for per-row position lists (each of length C). */
export function rowRope(cfg: ModelConfig, invFreq: Float64Array, positions: Int32Array | number[], batch: number): RopeTables {
  const C = positions.length / batch;
  const { cos, sin } = ropeTableData(invFreq, positions);
  const shape = [batch, 1, C, cfg.headDim];
  return { cos: np.array(cos).reshape(shape), sin: np.array(sin).reshape(shape) };
}

export type PrefillInputs = {
  tokens: Tensor; // int32 [B, C]
  rope: RopeTables; // [B, 1, C, hd]
  mask: Tensor; // [B, 1, C, P + C] additive
  pick: Tensor; // float32 [B, 1, C], one-hot of each row's last prompt token
};

export type DecodeInputs = {
  tokens: Tensor; // int32 [B]
  rope: RopeTables; // [B, 1, 1, hd]
  mask: Tensor; // [B, 1, 1, slots], the open slot included
  slot: Tensor; // float32 [1, 1, K, 1], one-hot of the open slot in the last block
};

/** Compiled forwards for one model config; `dispose()` frees their compiled programs. */
export class CachedForward {
  readonly invFreq: Float64Array;
  private readonly prefillJit;
  private readonly decodeJit;
  private readonly mergeJit;

  constructor(readonly cfg: ModelConfig) {
    this.invFreq = ropeInvFreq(cfg);
    this.prefillJit = jit((w: GenerationWeights, inputs: PrefillInputs, past: KvBlock[][]) => prefillTraced(cfg, w, inputs, past));
    this.decodeJit = jit((w: GenerationWeights, inputs: DecodeInputs, cache: KvBlock[][]) => decodeTraced(cfg, w, inputs, cache));
    // past [B, Hkv, cap, hd] with slots [o, o + K) taken from open [B, Hkv, K, hd]: index[t] = t - o (clamped).
    this.mergeJit = jit((past: Tensor, open: Tensor, index: Tensor, inRange: Tensor) => np.where(inRange, np.take(open, index, 2), past));
  }

  /** Consumes weights, inputs and past (pass refs). Returns log p [B, V] and the chunk's blocks per layer. */
  prefill(w: GenerationWeights, inputs: PrefillInputs, past: KvBlock[][]): { logprobs: Tensor; blocks: KvBlock[] } {
    return this.prefillJit(w, inputs, past) as { logprobs: Tensor; blocks: KvBlock[] };
  }

  /** Consumes weights, inputs and cache (pass refs). Returns log p [B, V] and each layer's rewritten last block. */
  decode(w: GenerationWeights, inputs: DecodeInputs, cache: KvBlock[][]): { logprobs: Tensor; last: KvBlock[] } {
    return this.decodeJit(w, inputs, cache) as { logprobs: Tensor; last: KvBlock[] };
  }

  /** `past` with slots [offset, offset + K) replaced by `open` (K slots), in every row. Consumes past and open. */
  merge(past: Tensor, open: Tensor, offset: number): Tensor {
    const capacity = past.shape[2];
    const K = open.shape[2];
    const index = new Int32Array(capacity);
    const inRange = new Uint8Array(capacity);
    for (let t = 0; t < capacity; t++) {
      const i = t - offset;
      index[t] = Math.min(Math.max(i, 0), K - 1);
      inRange[t] = i >= 0 && i < K ? 1 : 0;
    }
    const mask = np.array(Array.from(inRange, (x) => x === 1)).reshape([1, 1, capacity, 1]);
    return this.mergeJit(past, open, np.array(index, { dtype: np.int32 }), mask) as Tensor;
  }

  dispose(): void {
    this.prefillJit.dispose();
    this.decodeJit.dispose();
    this.mergeJit.dispose();
  }
}

/**
 * Final norm, LM head and log-softmax: [.., d] -> log p [.., V], in float32 as the training forward
 * computes it (and the JS side needs no V exponentials per row for the model logprob or greedy).
 * Consumes hidden, finalNorm and head.
 */
function headLogprobs(cfg: ModelConfig, w: GenerationWeights, hidden: Tensor): Tensor {
  return nn.logSoftmax(linear(rmsNorm(hidden, w.finalNorm, cfg.rmsNormEps), w.head), -1);
}

// Token embeddings by gather (np.take): generation takes no gradient, so it skips the training
// forward's one-hot matmul (a V x d product per token).

function prefillTraced(cfg: ModelConfig, w: GenerationWeights, inputs: PrefillInputs, past: KvBlock[][]): { logprobs: Tensor; blocks: KvBlock[] } {
  const [B] = inputs.tokens.shape;
  let x = np.take(w.embed, inputs.tokens, 0);
  const blocks: KvBlock[] = [];
  w.layers.forEach((lp, i) => {
    const rope = { cos: inputs.rope.cos.ref, sin: inputs.rope.sin.ref };
    const out = prefillLayer(cfg, lp, x, rope, past[i], inputs.mask.ref);
    blocks.push({ k: out.k, v: out.v });
    x = out.x;
  });
  inputs.rope.cos.dispose();
  inputs.rope.sin.dispose();
  inputs.mask.dispose();
  const last = np.matmul(inputs.pick, x); // [B, 1, d]: each row's last prompt token
  return { logprobs: headLogprobs(cfg, w, last).reshape([B, cfg.vocabSize]), blocks };
}

function decodeTraced(cfg: ModelConfig, w: GenerationWeights, inputs: DecodeInputs, cache: KvBlock[][]): { logprobs: Tensor; last: KvBlock[] } {
  const [B] = inputs.tokens.shape;
  let x = np.take(w.embed, inputs.tokens.reshape([B, 1]), 0);
  const last: KvBlock[] = [];
  w.layers.forEach((lp, i) => {
    const blocks = cache[i];
    const rope = { cos: inputs.rope.cos.ref, sin: inputs.rope.sin.ref };
    const out = decodeLayer(cfg, lp, x, rope, blocks.slice(0, -1), blocks[blocks.length - 1], inputs.slot, inputs.mask.ref);
    last.push(out.open);
    x = out.x;
  });
  inputs.slot.dispose();
  inputs.rope.cos.dispose();
  inputs.rope.sin.dispose();
  inputs.mask.dispose();
  return { logprobs: headLogprobs(cfg, w, x).reshape([B, cfg.vocabSize]), last };
}

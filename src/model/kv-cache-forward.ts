/**
 * The two compiled forwards of generation:
 *   prefill: a chunk of C prompt tokens per row (right-padded), attending to shared cached blocks
 *            and causally to itself -> the chunk's keys/values and the logits at each row's last token;
 *   decode:  one token per row, attending to every cached block -> logits, with the token's key and
 *            value written into the open decode block at `slot` (a one-hot mask over its slots).
 * Both are jit-compiled once per input shape signature; parameters are inputs, not constants, so a
 * weight update needs no recompilation. Plain JS builds the small per-call inputs (rope rows, masks).
 */
import type { ModelConfig } from './config.ts';
import { jit, np, type Tensor } from './engine.ts';
import { cachedDecoderLayer, type KvBlock } from './kv-cache-attention.ts';
import { layerParams, type Params } from './params.ts';
import { ropeInvFreq, ropeTableData, type RopeTables } from './rope.ts';
import { lmHead } from './transformer.ts';

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
  mask: Tensor; // [B, 1, 1, slots + 1]
  slot: Tensor; // float32 [1, 1, K, 1], one-hot of the open slot in the last block
};

/**
 * Token embeddings by gather ([..] int32 -> [.., d]). Generation takes no gradient, so it can skip
 * the training forward's one-hot matmul (a V x d product per token).
 */
function embed(cfg: ModelConfig, params: Params, tokens: Tensor): Tensor {
  const table = params['model.embed_tokens.weight'];
  return np.take(cfg.tieWordEmbeddings ? table.ref : table, tokens, 0);
}

/** Compiled forwards for one model config; `dispose()` frees their compiled programs. */
export class CachedForward {
  readonly invFreq: Float64Array;
  private readonly prefillJit;
  private readonly decodeJit;

  constructor(readonly cfg: ModelConfig) {
    this.invFreq = ropeInvFreq(cfg);
    this.prefillJit = jit((params: Params, inputs: PrefillInputs, past: KvBlock[][]) => prefillTraced(cfg, params, inputs, past));
    this.decodeJit = jit((params: Params, inputs: DecodeInputs, cache: KvBlock[][]) => decodeTraced(cfg, params, inputs, cache));
  }

  /** Consumes params, inputs and past (pass refs). Returns logits [B, V] and the chunk's blocks per layer. */
  prefill(params: Params, inputs: PrefillInputs, past: KvBlock[][]): { logits: Tensor; blocks: KvBlock[] } {
    return this.prefillJit(params, inputs, past) as { logits: Tensor; blocks: KvBlock[] };
  }

  /** Consumes params, inputs and cache (pass refs). Returns logits [B, V] and each layer's rewritten last block. */
  decode(params: Params, inputs: DecodeInputs, cache: KvBlock[][]): { logits: Tensor; last: KvBlock[] } {
    return this.decodeJit(params, inputs, cache) as { logits: Tensor; last: KvBlock[] };
  }

  dispose(): void {
    this.prefillJit.dispose();
    this.decodeJit.dispose();
  }
}

function prefillTraced(cfg: ModelConfig, params: Params, inputs: PrefillInputs, past: KvBlock[][]): { logits: Tensor; blocks: KvBlock[] } {
  const [B] = inputs.tokens.shape;
  let x = embed(cfg, params, inputs.tokens);
  const blocks: KvBlock[] = [];
  for (let i = 0; i < cfg.numLayers; i++) {
    const rope = { cos: inputs.rope.cos.ref, sin: inputs.rope.sin.ref };
    const out = cachedDecoderLayer(cfg, layerParams(params, i), x, rope, past[i], inputs.mask.ref);
    blocks.push({ k: out.k, v: out.v });
    x = out.x;
  }
  inputs.rope.cos.dispose();
  inputs.rope.sin.dispose();
  inputs.mask.dispose();
  const last = np.matmul(inputs.pick, x); // [B, 1, d]
  const logits = lmHead(cfg, params, last).reshape([B, cfg.vocabSize]);
  return { logits, blocks };
}

function decodeTraced(cfg: ModelConfig, params: Params, inputs: DecodeInputs, cache: KvBlock[][]): { logits: Tensor; last: KvBlock[] } {
  const [B] = inputs.tokens.shape;
  let x = embed(cfg, params, inputs.tokens.reshape([B, 1]));
  const last: KvBlock[] = [];
  const isSlot = inputs.slot.greater(0.5); // [1, 1, K, 1]: true at the open slot
  for (let i = 0; i < cfg.numLayers; i++) {
    const blocks = cache[i];
    const open = blocks[blocks.length - 1];
    const past = blocks.slice(0, -1).concat({ k: open.k.ref, v: open.v.ref });
    const rope = { cos: inputs.rope.cos.ref, sin: inputs.rope.sin.ref };
    const out = cachedDecoderLayer(cfg, layerParams(params, i), x, rope, past, inputs.mask.ref);
    // Write the token's k/v ([B, Hkv, 1, hd], broadcast over the block's slots) at the open slot.
    last.push({
      k: np.where(isSlot.ref, out.k, open.k),
      v: np.where(isSlot.ref, out.v, open.v),
    });
    x = out.x;
  }
  isSlot.dispose();
  inputs.rope.cos.dispose();
  inputs.rope.sin.dispose();
  inputs.mask.dispose();
  const logits = lmHead(cfg, params, x).reshape([B, cfg.vocabSize]);
  return { logits, last };
}

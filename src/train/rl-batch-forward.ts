/**
 * The training forward over an RlLayout (rl-batch.ts): the shared prefix runs once as a batch of
 * one, its keys and values per layer are broadcast to every row, and each row's tokens attend to
 * the whole prefix plus their own sequence's past (packed rows: block-diagonal causal). Only the
 * trained targets' hidden states go on to the LM head and its softmax over the vocabulary (a gather
 * into the layout's target slots; on Blackjack a step's training took 12 % less time). The result
 * equals the full-sequence forward (tokenLogprobs) exactly, up to float rounding, and
 * gradients flow into the prefix too. Traceable: call it inside valueAndGrad / jit.
 */
import type { ModelConfig } from '../model/config.ts';
import { nn, np, type Tensor } from '../model/engine.ts';
import { causalMask, decoderLayer, gradBarrier, MASKED, type LayerParams } from '../model/layers.ts';
import { layerParams, type Params } from '../model/params.ts';
import { ropeTables } from '../model/rope.ts';
import { embedTokens, lmHead } from '../model/transformer.ts';
import type { RlLayout } from './rl-batch.ts';

/**
 * The engine arrays of a layout. The per-target arrays hold the layout's K target slots (RlLayout
 * targetSlots: its trained positions, then padding with mask 0). The prefix entries are absent when
 * the layout has no shared prefix.
 */
export type RlTensors = {
  tokens: Tensor; // [B, T] int32
  /** [K] int32: the row position (b·T + t) of each target slot (padding slots: 0). */
  targetIndex: Tensor;
  targets: Tensor; // [1, K] int32
  mask: Tensor; // [1, K]
  advantages: Tensor; // [1, K]
  samplingLogprobs: Tensor; // [1, K]
  sequenceLengths: Tensor; // [1, K]
  /** [1, K] each target's sample weight (RlLayout.tokenWeights); always present, so jit sees one signature. */
  tokenWeights: Tensor;
  /** [1, K] supervised targets; only when the layout has any (jit rejects an undefined leaf, so the key is left out). */
  sftMask?: Tensor;
  /** [1, K] 1 on the targets of explored samples (RlLayout.explored); only when the layout has any. */
  explored?: Tensor;
  cos: Tensor; // [B, 1, T, hd]
  sin: Tensor;
  attnMask: Tensor; // [B, 1, T, P + T] additive
  prefix?: { tokens: Tensor /* [1, P] */; cos: Tensor /* [P, hd] */; sin: Tensor; attnMask: Tensor /* [1, 1, P, P] */ };
};

/**
 * Row query t (segment s) sees every prefix key, the row keys t' ≤ t of segment s, and the keys of
 * the trunk segment it continues up to the end of its own prompt there (the trunk sits before it in
 * the row and may hold a longer prompt of the same conversation).
 */
function rowMask(layout: RlLayout): Float32Array {
  const { rows, length, segmentIds, trunkSegments, trunkEnds } = layout;
  const P = layout.prefix.length;
  const S = P + length;
  const data = new Float32Array(rows * length * S);
  for (let b = 0; b < rows; b++) {
    for (let t = 0; t < length; t++) {
      const base = (b * length + t) * S + P;
      const seg = segmentIds[b * length + t];
      const trunk = trunkSegments[b * length + t];
      const trunkEnd = trunkEnds[b * length + t];
      // attention() skips the keys after each query (causal chunks), so a trunk must end before its continuation.
      if (trunk !== -1 && trunkEnd > t) throw new Error(`rowMask: row ${b} position ${t} sees its trunk up to position ${trunkEnd}, past itself`);
      for (let s = 0; s < length; s++) {
        const other = segmentIds[b * length + s];
        const inTrunk = trunk !== -1 && other === trunk && s < trunkEnd;
        // Padding (segment -1) sees its own earlier padding: every softmax row keeps a finite entry.
        if ((s > t || other !== seg) && !inTrunk) data[base + s] = MASKED;
      }
    }
  }
  return data;
}

export function rlTensors(cfg: ModelConfig, layout: RlLayout): RlTensors {
  const { rows, length, targetPositions, targetSlots } = layout;
  const P = layout.prefix.length;
  const positions = Array.from({ length: rows }, (_, r) => layout.positions.subarray(r * length, (r + 1) * length));
  const rope = ropeTables(cfg, positions);
  const index = new Int32Array(targetSlots);
  index.set(targetPositions);
  // A row-position array's values at the target slots, 0 in the padding slots.
  const atTargets = (values: Float32Array) =>
    np.array(Float32Array.from(index, (at, k) => (k < targetPositions.length ? values[at] : 0))).reshape([1, targetSlots]);
  const out: RlTensors = {
    tokens: np.array(layout.inputIds, { dtype: np.int32 }).reshape([rows, length]),
    targetIndex: np.array(index, { dtype: np.int32 }),
    targets: np.array(Int32Array.from(index, (at) => layout.targetIds[at]), { dtype: np.int32 }).reshape([1, targetSlots]),
    mask: atTargets(layout.mask),
    advantages: atTargets(layout.advantages),
    samplingLogprobs: atTargets(layout.samplingLogprobs),
    sequenceLengths: atTargets(layout.sequenceLengths),
    tokenWeights: atTargets(layout.tokenWeights),
    cos: rope.cos,
    sin: rope.sin,
    attnMask: np.array(rowMask(layout)).reshape([rows, 1, length, P + length]),
  };
  if (layout.sftMask) out.sftMask = atTargets(layout.sftMask);
  if (layout.explored) out.explored = atTargets(layout.explored);
  if (P > 0) {
    const prefixRope = ropeTables(cfg, Array.from({ length: P }, (_, t) => t));
    out.prefix = {
      tokens: np.array(Int32Array.from(layout.prefix), { dtype: np.int32 }).reshape([1, P]),
      cos: prefixRope.cos,
      sin: prefixRope.sin,
      attnMask: causalMask(P),
    };
  }
  return out;
}

/** A layer's weights with a reference added to each (for a second use of the same weights). */
function refLayer(p: LayerParams): LayerParams {
  const out: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(p)) out[name] = t === undefined ? undefined : (t as Tensor).ref;
  return out as LayerParams;
}

/**
 * log p(target) at every target slot [1, K] (and the entropy of the next-token distribution when
 * asked), p = softmax(logits / temperature) (default 1): the distribution the rollouts sampled
 * from, so the policy ratio against their recorded logprobs starts at 1. Consumes params and the
 * tensors it reads (all but mask, advantages, samplingLogprobs, sequenceLengths, tokenWeights,
 * sftMask, explored, which the caller's loss uses).
 */
export function rlLogprobs(
  cfg: ModelConfig,
  params: Params,
  batch: Pick<RlTensors, 'tokens' | 'targetIndex' | 'targets' | 'cos' | 'sin' | 'attnMask' | 'prefix'>,
  options: { entropy?: boolean; materializeHeads?: boolean; temperature?: number } = {},
): { logprobs: Tensor; entropy?: Tensor } {
  const temperature = options.temperature ?? 1;
  if (!(Number.isFinite(temperature) && temperature > 0)) throw new Error(`rlLogprobs: temperature must be a finite number > 0, got ${temperature}`);
  const layerOptions = { materializeHeads: options.materializeHeads };
  const B = batch.tokens.shape[0];
  const embed = params['model.embed_tokens.weight'];
  const past: { k: Tensor; v: Tensor }[] = [];
  if (batch.prefix) {
    const { tokens, cos, sin, attnMask } = batch.prefix;
    let x = embedTokens(embed.ref, tokens);
    for (let i = 0; i < cfg.numLayers; i++) {
      const last = i === cfg.numLayers - 1;
      const out = decoderLayer(cfg, refLayer(layerParams(params, i)), x, { cos: last ? cos : cos.ref, sin: last ? sin : sin.ref }, last ? attnMask : attnMask.ref, undefined, layerOptions);
      x = out.x;
      const [, Hkv, P, hd] = out.k.shape;
      past.push({ k: np.broadcastTo(out.k, [B, Hkv, P, hd]), v: np.broadcastTo(out.v, [B, Hkv, P, hd]) });
    }
    x.dispose();
  }
  let x = embedTokens(cfg.tieWordEmbeddings ? embed.ref : embed, batch.tokens);
  for (let i = 0; i < cfg.numLayers; i++) {
    const last = i === cfg.numLayers - 1;
    const rope = last ? { cos: batch.cos, sin: batch.sin } : { cos: batch.cos.ref, sin: batch.sin.ref };
    const out = decoderLayer(cfg, layerParams(params, i), x, rope, last ? batch.attnMask : batch.attnMask.ref, past[i], layerOptions);
    out.k.dispose();
    out.v.dispose();
    x = out.x;
  }
  const [, T, d] = x.shape;
  // The barrier gives the gather's backward (a scatter) a computed cotangent, as jit requires.
  const hiddenAtTargets = gradBarrier(np.take(x.reshape([B * T, d]), batch.targetIndex, 0)).reshape([1, -1, d]);
  const logits = lmHead(cfg, params, hiddenAtTargets);
  const logp = nn.logSoftmax(temperature === 1 ? logits : logits.mul(1 / temperature), -1); // [1, K, V]
  const picked = logp.ref.mul(nn.oneHot(batch.targets, cfg.vocabSize)).sum(-1);
  if (!options.entropy) {
    logp.dispose();
    return { logprobs: picked };
  }
  // H = −Σ p log p
  return { logprobs: picked, entropy: np.exp(logp.ref).mul(logp).sum(-1).neg() };
}

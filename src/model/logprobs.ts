/**
 * The training forward: log-probabilities (and entropies) of given tokens after their contexts,
 * batched, differentiable (call `tokenLogprobs` inside valueAndGrad). Losses are built on it.
 */
import type { ModelConfig } from './config.ts';
import { jit, nn, np, tree, type Tensor } from './engine.ts';
import { causalMask, packedCausalMask } from './layers.ts';
import type { LoraRuntime } from './lora.ts';
import type { Params } from './params.ts';
import { ropeTables } from './rope.ts';
import { buildTokenBatch, completionValues, type SequenceSample, type TokenBatch, type TokenBatchOptions } from './token-batch.ts';
import { forwardLogits } from './transformer.ts';

/** A TokenBatch on the engine: what a jitted loss takes as arguments. */
export type BatchTensors = {
  tokens: Tensor; // [B, T] int32
  targets: Tensor; // [B, T] int32
  mask: Tensor; // [B, T] float32, 1 on scored (completion) positions
  cos: Tensor; // [T, hd] or [B, 1, T, hd]
  sin: Tensor;
  attnMask: Tensor; // additive, [1, 1, T, T] or [B, 1, T, T]
};

export function batchTensors(cfg: ModelConfig, b: TokenBatch): BatchTensors {
  const shape = [b.batch, b.length];
  const packed = b.segmentIds !== null;
  const positions = packed
    ? Array.from({ length: b.batch }, (_, r) => b.positions.subarray(r * b.length, (r + 1) * b.length))
    : Array.from({ length: b.length }, (_, t) => t);
  const rope = ropeTables(cfg, positions);
  return {
    tokens: np.array(b.inputIds, { dtype: np.int32 }).reshape(shape),
    targets: np.array(b.targetIds, { dtype: np.int32 }).reshape(shape),
    mask: np.array(b.mask).reshape(shape),
    cos: rope.cos,
    sin: rope.sin,
    attnMask: packed ? packedCausalMask(b.segmentIds!, b.batch, b.length) : causalMask(b.length),
  };
}

export type LogprobOptions = {
  /** Also return per-position entropy of the (tempered) next-token distribution. */
  entropy?: boolean;
  /** Divide logits by this before the softmax (the sampling temperature); default 1. */
  temperature?: number;
};

/** The trainable part of a LoRA forward: params are then the frozen base (see forwardLogits). */
export type LogprobLora = { lora?: LoraRuntime };

/**
 * log p(target_t | tokens_≤t) at every position [B, T] (and entropy [B, T] when asked). Positions
 * outside `mask` carry values too; multiply by the mask before reducing. Consumes params and the
 * batch arrays it reads (tokens, targets, cos, sin, attnMask); `mask` is not read and left to the caller.
 */
export function tokenLogprobs(
  cfg: ModelConfig,
  params: Params,
  batch: Omit<BatchTensors, 'mask'>,
  options: LogprobOptions & LogprobLora = {},
): { logprobs: Tensor; entropy?: Tensor } {
  let logits = forwardLogits(cfg, params, batch.tokens, { cos: batch.cos, sin: batch.sin }, batch.attnMask, options.lora);
  const temperature = options.temperature ?? 1;
  if (temperature !== 1) logits = logits.mul(1 / temperature);
  const logp = nn.logSoftmax(logits, -1); // [B, T, V]
  const picked = logp.ref.mul(nn.oneHot(batch.targets, cfg.vocabSize)).sum(-1);
  if (!options.entropy) {
    logp.dispose();
    return { logprobs: picked };
  }
  // H = -Σ p log p
  const entropy = np.exp(logp.ref).mul(logp).sum(-1).neg();
  return { logprobs: picked, entropy };
}

type ScoreFn = (params: Params, batch: Omit<BatchTensors, 'mask'>) => { logprobs: Tensor; entropy?: Tensor };
const scorers = new WeakMap<ModelConfig, Map<string, ScoreFn>>();

function scorer(cfg: ModelConfig, options: LogprobOptions): ScoreFn {
  let byOptions = scorers.get(cfg);
  if (!byOptions) scorers.set(cfg, (byOptions = new Map()));
  const key = `${options.entropy ? 1 : 0}:${options.temperature ?? 1}`;
  let fn = byOptions.get(key);
  if (!fn) {
    fn = jit((params: Params, batch: Omit<BatchTensors, 'mask'>) => tokenLogprobs(cfg, params, batch, options)) as unknown as ScoreFn;
    byOptions.set(key, fn);
  }
  return fn;
}

/**
 * Eager helper: per-sample log-probabilities (and entropies) of each completion token, in order.
 * Borrows params (does not consume them). This is the number the sampler's logprobs must match.
 */
export async function sequenceLogprobs(
  cfg: ModelConfig,
  params: Params,
  samples: readonly SequenceSample[],
  options: LogprobOptions & TokenBatchOptions = {},
): Promise<{ logprobs: number[][]; entropy?: number[][] }> {
  const batch = buildTokenBatch(samples, options);
  const tensors = batchTensors(cfg, batch);
  tensors.mask.dispose();
  const { mask: _unused, ...inputs } = tensors;
  const out = scorer(cfg, { entropy: options.entropy, temperature: options.temperature })(tree.ref(params), inputs);
  const logprobs = completionValues(batch, await out.logprobs.data());
  if (!out.entropy) return { logprobs };
  return { logprobs, entropy: completionValues(batch, await out.entropy.data()) };
}

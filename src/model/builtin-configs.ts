/**
 * Spindle's built-in model shapes: the default model it trains from scratch, and the `reference`
 * configuration the benchmarks compare against PyTorch on.
 */
import type { ModelConfig } from './config.ts';

/**
 * The default embedded model (≈ 0.85M parameters with a 2,048-token vocabulary): Qwen3's
 * architecture at toy size. Qwen3-style because q/k RMSNorm keeps attention logits bounded when a
 * tiny model is trained from scratch at a high learning rate (warm start, then RL), and because the
 * same code path (GQA, q/k norm, tied head) then serves the real Qwen3 checkpoints users load.
 * d 128 with 3 layers keeps training near 10k tokens/s on two cores; 1,024 positions fit a
 * multi-turn episode's prompt and completion.
 */
export const DEFAULT_MODEL_CONFIG: ModelConfig = {
  architecture: 'qwen3',
  vocabSize: 2048,
  hiddenSize: 128,
  intermediateSize: 384,
  numLayers: 3,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 32,
  rmsNormEps: 1e-6,
  ropeTheta: 10000,
  ropeScaling: { type: 'none' },
  maxPositionEmbeddings: 1024,
  tieWordEmbeddings: true,
  qkvBias: false,
  oBias: false,
  mlpBias: false,
  qkNorm: true,
  bosTokenId: null,
  eosTokenIds: [],
};

/** The default model sized to a tokenizer: its vocabulary and end-of-turn ids. */
export function defaultModelConfigFor(tokenizer: { vocabSize: number; eosTokenIds: number[]; bosTokenId?: number | null }): ModelConfig {
  return {
    ...DEFAULT_MODEL_CONFIG,
    vocabSize: tokenizer.vocabSize,
    eosTokenIds: [...tokenizer.eosTokenIds],
    bosTokenId: tokenizer.bosTokenId ?? null,
  };
}

/**
 * `reference`: the shape PyTorch was measured on (d 128, 2 layers, 4 heads, SwiGLU MLP 512,
 * vocab 512; trained at sequence length 128, batch 16). Llama-style, ≈ 0.59M parameters.
 */
export const REFERENCE_BENCH_CONFIG: ModelConfig = {
  architecture: 'llama',
  vocabSize: 512,
  hiddenSize: 128,
  intermediateSize: 512,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 4,
  headDim: 32,
  rmsNormEps: 1e-5,
  ropeTheta: 10000,
  ropeScaling: { type: 'none' },
  maxPositionEmbeddings: 128,
  tieWordEmbeddings: true,
  qkvBias: false,
  oBias: false,
  mlpBias: false,
  qkNorm: false,
  bosTokenId: null,
  eosTokenIds: [],
};

export const REFERENCE_BENCH_SHAPE = { batch: 16, seqLen: 128 } as const;

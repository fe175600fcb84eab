/**
 * ModelConfig: the architecture the forward implements, read from a Hugging Face config.json
 * (model_type llama, qwen2, qwen3) or taken from Spindle's built-in configs.
 */
import { z } from 'zod';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';

export type Architecture = 'llama' | 'qwen2' | 'qwen3';

export type RopeScaling =
  | { type: 'none' }
  | { type: 'linear'; factor: number }
  | {
      type: 'llama3';
      factor: number;
      lowFreqFactor: number;
      highFreqFactor: number;
      originalMaxPositionEmbeddings: number;
    };

export type ModelConfig = {
  architecture: Architecture;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  ropeScaling: RopeScaling;
  maxPositionEmbeddings: number;
  tieWordEmbeddings: boolean;
  /** Biases on q/k/v projections (qwen2 always; llama/qwen3 when attention_bias). */
  qkvBias: boolean;
  /** Bias on o_proj (llama/qwen3 when attention_bias; never qwen2). */
  oBias: boolean;
  /** Biases on gate/up/down (llama mlp_bias). */
  mlpBias: boolean;
  /** RMSNorm over head_dim on q and k before RoPE (qwen3). */
  qkNorm: boolean;
  bosTokenId: number | null;
  eosTokenIds: number[];
};

const positiveInt = z.number().int().positive();
const tokenId = z.number().int().nonnegative();

const ropeScalingSchema = z
  .object({
    rope_type: z.string().optional(),
    type: z.string().optional(),
    factor: z.number().positive().optional(),
    low_freq_factor: z.number().positive().optional(),
    high_freq_factor: z.number().positive().optional(),
    original_max_position_embeddings: positiveInt.optional(),
  })
  .loose();

const hfConfigSchema = z
  .object({
    model_type: z.string(),
    vocab_size: positiveInt,
    hidden_size: positiveInt,
    intermediate_size: positiveInt,
    num_hidden_layers: positiveInt,
    num_attention_heads: positiveInt,
    num_key_value_heads: positiveInt.nullish(),
    head_dim: positiveInt.nullish(),
    hidden_act: z.string().optional(),
    rms_norm_eps: z.number().positive().optional(),
    rope_theta: z.number().positive().optional(),
    rope_scaling: ropeScalingSchema.nullish(),
    max_position_embeddings: positiveInt.optional(),
    tie_word_embeddings: z.boolean().optional(),
    attention_bias: z.boolean().optional(),
    mlp_bias: z.boolean().optional(),
    use_sliding_window: z.boolean().optional(),
    bos_token_id: tokenId.nullish(),
    eos_token_id: z.union([tokenId, z.array(tokenId)]).nullish(),
  })
  .loose();

type HfConfig = z.infer<typeof hfConfigSchema>;

const ARCHITECTURES: readonly Architecture[] = ['llama', 'qwen2', 'qwen3'];

function fail(label: string, message: string): never {
  throw new UsageError(`${label}: ${message}`);
}

function parseRopeScaling(raw: HfConfig['rope_scaling'], label: string): RopeScaling {
  if (!raw) return { type: 'none' };
  const field = raw.rope_type !== undefined ? 'rope_type' : 'type';
  const type = raw.rope_type ?? raw.type;
  const need = (key: 'factor' | 'low_freq_factor' | 'high_freq_factor' | 'original_max_position_embeddings'): number => {
    const value = raw[key];
    if (value === undefined) fail(label, `rope_scaling.${key} is required for rope_scaling.${field} "${type}"`);
    return value;
  };
  switch (type) {
    case undefined:
    case 'default':
      return { type: 'none' };
    case 'linear':
      return { type: 'linear', factor: need('factor') };
    case 'llama3':
      return {
        type: 'llama3',
        factor: need('factor'),
        lowFreqFactor: need('low_freq_factor'),
        highFreqFactor: need('high_freq_factor'),
        originalMaxPositionEmbeddings: need('original_max_position_embeddings'),
      };
    default:
      return fail(label, `rope_scaling.${field} "${String(type)}" is not supported (supported: default, linear, llama3)`);
  }
}

/** Parses a Hugging Face config.json object; every error names the field and says what is allowed. */
export function parseModelConfig(json: unknown, label = 'config.json'): ModelConfig {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) fail(label, 'must be a JSON object');
  const modelType = (json as Record<string, unknown>).model_type;
  if (!(ARCHITECTURES as readonly unknown[]).includes(modelType)) {
    fail(label, `model_type ${JSON.stringify(modelType)} is not supported (supported: ${ARCHITECTURES.join(', ')})`);
  }
  const parsed = hfConfigSchema.safeParse(json);
  if (!parsed.success) fail(label, describeZodError(parsed.error));
  const c = parsed.data;
  const architecture = c.model_type as Architecture;

  const numKvHeads = c.num_key_value_heads ?? c.num_attention_heads;
  if (c.num_attention_heads % numKvHeads !== 0) {
    fail(label, `num_attention_heads ${c.num_attention_heads} is not a multiple of num_key_value_heads ${numKvHeads}`);
  }
  if (c.head_dim == null && c.hidden_size % c.num_attention_heads !== 0) {
    fail(label, `hidden_size ${c.hidden_size} is not a multiple of num_attention_heads ${c.num_attention_heads} and head_dim is not given`);
  }
  const headDim = c.head_dim ?? c.hidden_size / c.num_attention_heads;
  if (headDim % 2 !== 0) fail(label, `head_dim ${headDim} must be even for rotary embeddings`);
  if (c.hidden_act !== undefined && c.hidden_act !== 'silu') {
    fail(label, `hidden_act "${c.hidden_act}" is not supported (only "silu", the SwiGLU MLP)`);
  }
  if (c.use_sliding_window === true) fail(label, 'use_sliding_window true is not supported (set it to false)');
  if (architecture === 'qwen2' && c.attention_bias !== undefined && !c.attention_bias) {
    fail(label, 'attention_bias false is not supported for qwen2 (its q/k/v projections always have biases)');
  }
  const attentionBias = c.attention_bias ?? false;
  const eos = c.eos_token_id;
  return {
    architecture,
    vocabSize: c.vocab_size,
    hiddenSize: c.hidden_size,
    intermediateSize: c.intermediate_size,
    numLayers: c.num_hidden_layers,
    numHeads: c.num_attention_heads,
    numKvHeads,
    headDim,
    rmsNormEps: c.rms_norm_eps ?? 1e-6,
    ropeTheta: c.rope_theta ?? 10000,
    ropeScaling: parseRopeScaling(c.rope_scaling, label),
    maxPositionEmbeddings: c.max_position_embeddings ?? (architecture === 'llama' ? 2048 : 32768),
    tieWordEmbeddings: c.tie_word_embeddings ?? false,
    qkvBias: architecture === 'qwen2' || attentionBias,
    oBias: architecture !== 'qwen2' && attentionBias,
    mlpBias: architecture === 'llama' && (c.mlp_bias ?? false),
    qkNorm: architecture === 'qwen3',
    bosTokenId: c.bos_token_id ?? null,
    eosTokenIds: eos == null ? [] : Array.isArray(eos) ? eos : [eos],
  };
}

/** A config.json that transformers (and parseModelConfig) read back as the same model. */
export function modelConfigToHf(cfg: ModelConfig): Record<string, unknown> {
  const archName = { llama: 'LlamaForCausalLM', qwen2: 'Qwen2ForCausalLM', qwen3: 'Qwen3ForCausalLM' }[cfg.architecture];
  const scaling = cfg.ropeScaling;
  const ropeScaling =
    scaling.type === 'none'
      ? null
      : scaling.type === 'linear'
        ? { rope_type: 'linear', factor: scaling.factor }
        : {
            rope_type: 'llama3',
            factor: scaling.factor,
            low_freq_factor: scaling.lowFreqFactor,
            high_freq_factor: scaling.highFreqFactor,
            original_max_position_embeddings: scaling.originalMaxPositionEmbeddings,
          };
  const out: Record<string, unknown> = {
    architectures: [archName],
    model_type: cfg.architecture,
    vocab_size: cfg.vocabSize,
    hidden_size: cfg.hiddenSize,
    intermediate_size: cfg.intermediateSize,
    num_hidden_layers: cfg.numLayers,
    num_attention_heads: cfg.numHeads,
    num_key_value_heads: cfg.numKvHeads,
    head_dim: cfg.headDim,
    hidden_act: 'silu',
    rms_norm_eps: cfg.rmsNormEps,
    rope_theta: cfg.ropeTheta,
    rope_scaling: ropeScaling,
    max_position_embeddings: cfg.maxPositionEmbeddings,
    tie_word_embeddings: cfg.tieWordEmbeddings,
    bos_token_id: cfg.bosTokenId,
    eos_token_id: cfg.eosTokenIds.length === 1 ? cfg.eosTokenIds[0] : cfg.eosTokenIds,
    torch_dtype: 'float32',
  };
  if (cfg.architecture !== 'qwen2') out.attention_bias = cfg.oBias;
  if (cfg.architecture === 'llama') out.mlp_bias = cfg.mlpBias;
  if (cfg.architecture === 'qwen2') out.use_sliding_window = false;
  return out;
}

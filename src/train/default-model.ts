/**
 * The default model of `spindle train`: a byte-level BPE tokenizer trained on the env's own text
 * (tokenizer-corpus.ts: random episodes through the real agent loop, so every prompt and tool call
 * the model will read is in it), a chat template with a short system turn (default-model-template.ts),
 * the default architecture sized to that tokenizer, seeded random weights. Plain data out; checkpoint-io.ts writes it as a Hugging Face folder that `model:DIR` loads.
 */
import type { EnvSpec } from '../envs/env.ts';
import { defaultModelConfigFor } from '../model/builtin-configs.ts';
import { ChatTemplate } from '../model/chat-template.ts';
import type { ModelConfig } from '../model/config.ts';
import { initHostParams, type HostParams } from '../model/params.ts';
import { trainDefaultTokenizer } from '../model/tokenizer/default-tokenizer.ts';
import type { DigitSplit } from '../model/tokenizer/tokenizer-json.ts';
import { tokenizerFromJson, type Tokenizer } from '../model/tokenizer/tokenizer.ts';
import { DEFAULT_MODEL_CHAT_TEMPLATE } from './default-model-template.ts';
import { buildTokenizerCorpus } from './tokenizer-corpus.ts';

/** Everything about a model except its weights: what the sampler, the policy and a checkpoint need. */
export interface ModelAssets {
  cfg: ModelConfig;
  tokenizer: Tokenizer;
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  chatTemplate: ChatTemplate;
  /** Ids that end a turn (the sampler's stop ids). */
  stopTokenIds: number[];
  /**
   * The answer budget in tokens a train run settled on (its warm start measures it), saved as
   * generation_config.json's max_new_tokens so `model:DIR` and `run:RUN` play with it; absent before.
   */
  answerBudget?: number;
}

/** Size overrides of the default architecture (tests use a tiny one); vocabSize caps the tokenizer. */
export interface DefaultModelShape {
  vocabSize: number;
  /** How the tokenizer cuts numbers (default 'runs'). */
  digits?: DigitSplit;
  hiddenSize?: number;
  intermediateSize?: number;
  numLayers?: number;
  numHeads?: number;
  numKvHeads?: number;
  headDim?: number;
  maxPositionEmbeddings?: number;
}

export interface DefaultModelInput<O extends Record<string, unknown>> {
  spec: EnvSpec<O>;
  options: O;
  seed: number;
  /** Random episodes played for the tokenizer corpus. */
  corpusEpisodes: number;
  shape: DefaultModelShape;
}

export interface DefaultModel {
  assets: ModelAssets;
  params: HostParams;
  /** `longestText`: tokens of the corpus's longest text (an episode's whole conversation). */
  corpus: { texts: number; chars: number; tokens: number; longestText: number };
}

/** Granularity of a context grown past the architecture's. */
const CONTEXT_MULTIPLE = 256;

/**
 * The model's context when the config leaves it open: the default architecture's (1,024), or, for
 * an env whose random episodes are longer, the longest one with a quarter to spare (the trained
 * policy's answers and the episodes the corpus did not draw may run longer), in multiples of 256.
 * With 1,024, kelly's ten-turn episodes (1,220–1,310 tokens) were cut off after 7 or 8 of their 10 decisions.
 */
export function defaultContextLength(longestEpisodeTokens: number, base: number): number {
  return Math.max(base, Math.ceil((longestEpisodeTokens * 1.25) / CONTEXT_MULTIPLE) * CONTEXT_MULTIPLE);
}

/** The chat template, tokenizer and stop ids of saved tokenizer files. */
export function modelAssets(cfg: ModelConfig, tokenizerJson: Record<string, unknown>, tokenizerConfig: Record<string, unknown>, label: string): ModelAssets {
  const tokenizer = tokenizerFromJson(tokenizerJson, tokenizerConfig, label);
  const chatTemplate = new ChatTemplate(String(tokenizerConfig.chat_template), tokenizer.specialTokensMap, `${label}: chat_template`);
  const stopTokenIds = tokenizer.eosTokenId === null ? [...cfg.eosTokenIds] : [tokenizer.eosTokenId];
  return { cfg, tokenizer, tokenizerJson, tokenizerConfig, chatTemplate, stopTokenIds };
}

/**
 * The embedding rows: the tokenizer's vocabulary rounded up to a multiple of 32 (the extra rows are
 * never a target). jax-js's Wasm matmuls lose their SIMD tiling on odd sizes (rl-batch.ts).
 */
export function paddedVocab(tokenizerVocab: number): number {
  return Math.ceil(tokenizerVocab / 32) * 32;
}

export async function createDefaultModel<O extends Record<string, unknown>>(input: DefaultModelInput<O>): Promise<DefaultModel> {
  const texts = await buildTokenizerCorpus({
    envs: [{ spec: input.spec, options: input.options }],
    episodesPerEnv: input.corpusEpisodes,
    seed: input.seed,
    template: DEFAULT_MODEL_CHAT_TEMPLATE,
  });
  const trained = trainDefaultTokenizer(texts, { vocabSize: input.shape.vocabSize, digits: input.shape.digits });
  const files = { ...trained, tokenizerConfig: { ...trained.tokenizerConfig, chat_template: DEFAULT_MODEL_CHAT_TEMPLATE } };
  const tokenizer = tokenizerFromJson(files.tokenizerJson, files.tokenizerConfig, 'default tokenizer');
  if (tokenizer.eosTokenId === null) throw new Error('default tokenizer: no end-of-turn token');
  let chars = 0;
  let tokens = 0;
  let longestText = 0;
  for (const text of texts) {
    const n = tokenizer.encode(text).length;
    chars += text.length;
    tokens += n;
    longestText = Math.max(longestText, n);
  }
  const { vocabSize: _cap, digits: _digits, ...sizes } = input.shape;
  const base = defaultModelConfigFor({ vocabSize: paddedVocab(tokenizer.vocabSize), eosTokenIds: [tokenizer.eosTokenId], bosTokenId: null });
  const cfg: ModelConfig = {
    ...base,
    maxPositionEmbeddings: defaultContextLength(longestText, base.maxPositionEmbeddings),
    ...Object.fromEntries(Object.entries(sizes).filter(([, v]) => v !== undefined)),
  };
  const assets = modelAssets(cfg, files.tokenizerJson, files.tokenizerConfig, 'default tokenizer');
  return { assets, params: initHostParams(cfg, input.seed), corpus: { texts: texts.length, chars, tokens, longestText } };
}

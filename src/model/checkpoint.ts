/**
 * A checkpoint folder in Hugging Face's layout: config.json, model.safetensors (or shards plus
 * model.safetensors.index.json), tokenizer.json, tokenizer_config.json (with the chat template),
 * generation_config.json when present. Loading validates every tensor the config implies.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../core/errors.ts';
import { ChatTemplate } from './chat-template.ts';
import { readChatTemplateSource } from './chat-template-source.ts';
import { parseGenerationConfig, type GenerationConfig } from './checkpoint-generation.ts';
import { expectedTensorShapes, type TensorShapes } from './checkpoint-shapes.ts';
import { INDEX_FILE, SINGLE_FILE, readModelWeights, writeModelWeights } from './safetensors-sharded.ts';
import type { FloatDtype, TensorMap } from './safetensors.ts';
import { readJsonFile, tokenizerFromJson, type Tokenizer } from './tokenizer/tokenizer.ts';

export interface Checkpoint {
  dir: string;
  configJson: Record<string, unknown>;
  /** Float32 data by Hugging Face name; `dtype` is how the file stored it. */
  tensors: TensorMap;
  /** Tensors in the files that the config does not use (kept, never validated). */
  unexpectedTensors: string[];
  tokenizer: Tokenizer;
  /** The raw tokenizer files, to save them again unchanged. */
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  chatTemplate: ChatTemplate;
  generationConfig: GenerationConfig | null;
  /** Ids that end a turn: the tokenizer's eos and generation_config's eos_token_id, deduplicated. */
  stopTokenIds: number[];
}

export interface LoadOptions {
  /** Tensor names and shapes the config implies; default: `expectedTensorShapes` (llama, qwen2, qwen3 via parseModelConfig). */
  expectedShapes?: (configJson: Record<string, unknown>) => TensorShapes;
  /** A chat template to use instead of the checkpoint's own (required when it has none). */
  chatTemplate?: string;
}

function readObject(path: string): Record<string, unknown> {
  if (!existsSync(path)) throw new UsageError(`${path}: missing`);
  const value = readJsonFile(path);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${path}: must be a JSON object`);
  return value as Record<string, unknown>;
}

/** Throws naming the first tensor that is missing or has the wrong shape; returns the names the config does not use. */
export function validateTensors(tensors: TensorMap, expected: TensorShapes, label: string): string[] {
  for (const [name, shape] of Object.entries(expected)) {
    const tensor = tensors[name];
    if (!tensor) throw new UsageError(`${label}: tensor "${name}" ${JSON.stringify(shape)} required by config.json is missing`);
    if (tensor.shape.length !== shape.length || tensor.shape.some((d, i) => d !== shape[i])) {
      throw new UsageError(`${label}: tensor "${name}" has shape ${JSON.stringify(tensor.shape)}, config.json implies ${JSON.stringify(shape)}`);
    }
  }
  return Object.keys(tensors).filter((name) => !Object.hasOwn(expected, name));
}

export function loadCheckpoint(dir: string, options: LoadOptions = {}): Checkpoint {
  if (!existsSync(dir)) throw new UsageError(`${dir}: checkpoint folder not found`);
  // Small files first, so a missing one is reported before megabytes of weights are read.
  const configJson = readObject(join(dir, 'config.json'));
  const expected = options.expectedShapes ? options.expectedShapes(configJson) : expectedTensorShapes(configJson, join(dir, 'config.json'));
  const tokenizerJson = readObject(join(dir, 'tokenizer.json'));
  const tokenizerConfig = readObject(join(dir, 'tokenizer_config.json'));
  const tokenizer = tokenizerFromJson(tokenizerJson, tokenizerConfig, dir);
  const vocabSize = configJson.vocab_size;
  if (typeof vocabSize === 'number' && tokenizer.vocabSize > vocabSize) {
    throw new UsageError(`${dir}: the tokenizer has ids up to ${tokenizer.vocabSize - 1} but config.json vocab_size is ${vocabSize}`);
  }
  const templateSource = options.chatTemplate ?? readChatTemplateSource(dir, tokenizerConfig);
  if (templateSource === null) {
    throw new UsageError(`${dir}: no chat template (tokenizer_config.json has no chat_template and there is no chat_template.jinja)`);
  }
  const chatTemplate = new ChatTemplate(templateSource, tokenizer.specialTokensMap, join(dir, 'tokenizer_config.json'));
  const generationPath = join(dir, 'generation_config.json');
  const generationConfig = existsSync(generationPath) ? parseGenerationConfig(readJsonFile(generationPath), generationPath) : null;
  const stopTokenIds = [...new Set([...(tokenizer.eosTokenId === null ? [] : [tokenizer.eosTokenId]), ...(generationConfig?.eosTokenIds ?? [])])];
  if (stopTokenIds.length === 0) {
    throw new UsageError(`${dir}: no end-of-turn token (tokenizer_config.json eos_token or generation_config.json eos_token_id)`);
  }

  if (!existsSync(join(dir, SINGLE_FILE)) && !existsSync(join(dir, INDEX_FILE))) {
    throw new UsageError(`${dir}: missing ${SINGLE_FILE} (or ${INDEX_FILE} with its shards)`);
  }
  const tensors = readModelWeights(dir);
  const unexpectedTensors = validateTensors(tensors, expected, dir);
  return { dir, configJson, tensors, unexpectedTensors, tokenizer, tokenizerJson, tokenizerConfig, chatTemplate, generationConfig, stopTokenIds };
}

export interface SaveCheckpointInput {
  configJson: Record<string, unknown>;
  tensors: TensorMap;
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  /** Replaces tokenizer_config.json's chat_template. */
  chatTemplate?: string;
  generationConfig?: Record<string, unknown> | null;
}

export interface SaveOptions {
  /** Storage dtype (default F32); config.json's torch_dtype is set to match. */
  dtype?: Extract<FloatDtype, 'F32' | 'BF16'>;
  /** Shard above this many bytes of weights (default 5 GB, as transformers). */
  maxShardBytes?: number;
  expectedShapes?: (configJson: Record<string, unknown>) => TensorShapes;
}

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, JSON.stringify(value, null, 2) + '\n');
}

/** Writes a checkpoint folder that loadCheckpoint and Hugging Face tools read; validates before writing. Returns the files. */
export function saveCheckpoint(dir: string, input: SaveCheckpointInput, options: SaveOptions = {}): string[] {
  const dtype = options.dtype ?? 'F32';
  // Validate everything before the first write, so a bad input never leaves half a checkpoint.
  validateTensors(input.tensors, (options.expectedShapes ?? expectedTensorShapes)(input.configJson), dir);
  const tokenizerConfig = input.chatTemplate === undefined ? input.tokenizerConfig : { ...input.tokenizerConfig, chat_template: input.chatTemplate };
  tokenizerFromJson(input.tokenizerJson, tokenizerConfig, dir);
  const template = tokenizerConfig.chat_template;
  if (typeof template !== 'string') throw new UsageError(`${dir}: no chat template to save (give chatTemplate or tokenizer_config.chat_template)`);
  new ChatTemplate(template, {}, `${dir}: chat_template`);
  const generationPath = join(dir, 'generation_config.json');
  if (input.generationConfig) parseGenerationConfig(input.generationConfig, generationPath);

  mkdirSync(dir, { recursive: true });
  writeJson(join(dir, 'config.json'), { ...input.configJson, torch_dtype: dtype === 'BF16' ? 'bfloat16' : 'float32' });
  const weightFiles = writeModelWeights(dir, input.tensors, { dtype, maxShardBytes: options.maxShardBytes, metadata: { format: 'pt' } });
  writeJson(join(dir, 'tokenizer.json'), input.tokenizerJson);
  writeJson(join(dir, 'tokenizer_config.json'), tokenizerConfig);
  // The files of an earlier save in this folder would shadow or contradict this one.
  for (const stale of ['chat_template.jinja', 'chat_template.json']) rmSync(join(dir, stale), { force: true });
  const files = ['config.json', ...weightFiles, 'tokenizer.json', 'tokenizer_config.json'];
  if (input.generationConfig) {
    writeJson(generationPath, input.generationConfig);
    files.push('generation_config.json');
  } else {
    rmSync(generationPath, { force: true });
  }
  return files;
}

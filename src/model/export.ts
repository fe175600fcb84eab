/**
 * Exports a checkpoint folder as a Hugging Face model folder: config.json, model.safetensors (shards +
 * index above 5 GB), tokenizer.json, tokenizer_config.json with the chat template, generation_config.json.
 * A LoRA checkpoint is written either merged (one full model) or as the base model plus its PEFT adapter
 * in `adapter/` (adapter_config.json + adapter_model.safetensors, base_model_name_or_path = the folder),
 * which PEFT's PeftModel.from_pretrained and vLLM's --lora-modules read, and `model:DIR` loads merged.
 * The folder is built beside its destination and moved into place, so a failed export changes nothing.
 */
import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { UsageError } from '../core/errors.ts';
import { loadCheckpoint, saveCheckpoint } from './checkpoint.ts';
import { parseModelConfig } from './config.ts';
import { ADAPTER_SUBDIR, baseHostParams, readCheckpointAdapter } from './export-weights.ts';
import { saveLoraAdapter } from './lora-io.ts';
import { mergeLoraHost } from './lora.ts';
import { countParams, type HostParams } from './params.ts';
import type { TensorMap } from './safetensors.ts';

export const EXPORT_DTYPES = ['f32', 'bf16'] as const;
export type ExportDtype = (typeof EXPORT_DTYPES)[number];

export interface ExportOptions {
  /** Merge a LoRA adapter into the weights (default false: base + adapter/). */
  mergeLora?: boolean;
  /** Storage dtype of the weights (default f32). */
  dtype?: ExportDtype;
  /** Replace a non-empty destination folder (default false: refuse). */
  force?: boolean;
}

export interface ExportResult {
  /** Absolute path of the exported folder. */
  dir: string;
  /** Files written, relative to `dir`. */
  files: string[];
  /** What became of the source's LoRA adapter. */
  adapter: 'none' | 'merged' | 'separate';
  dtype: ExportDtype;
  /** Parameters of the (merged) model. */
  params: number;
}

/** Why `out` cannot receive an export of `source`, or null. */
function destinationProblem(source: string, out: string, force: boolean): string | null {
  const fromOut = relative(out, source);
  if (fromOut === '' || (!fromOut.startsWith('..') && !isAbsolute(fromOut))) return `${out} holds the checkpoint being exported; choose another folder`;
  if (!existsSync(out)) return null;
  if (!statSync(out).isDirectory()) return `${out} exists and is not a folder`;
  const entries = readdirSync(out);
  if (entries.length > 0 && !force) return `${out} is not empty (${entries.length} entries); pass --force to replace it`;
  return null;
}

function toTensorMap(host: HostParams): TensorMap {
  return Object.fromEntries(Object.entries(host).map(([name, t]) => [name, { dtype: 'F32' as const, shape: t.shape, data: t.data }]));
}

/** Writes the model `sourceDir` stands for into `outDir` (see the module comment). */
export function exportCheckpoint(sourceDir: string, outDir: string, options: ExportOptions = {}): ExportResult {
  const source = resolve(sourceDir);
  const out = resolve(outDir);
  const dtype = options.dtype ?? 'f32';
  if (!(EXPORT_DTYPES as readonly string[]).includes(dtype)) throw new UsageError(`--dtype: expected one of ${EXPORT_DTYPES.join(', ')}, got ${JSON.stringify(dtype)}`);
  const problem = destinationProblem(source, out, options.force ?? false);
  if (problem) throw new UsageError(`--out: ${problem}`);

  const checkpoint = loadCheckpoint(source);
  const cfg = parseModelConfig(checkpoint.configJson, join(source, 'config.json'));
  const base = baseHostParams(checkpoint, cfg);
  const adapter = readCheckpointAdapter(source, cfg);
  const merge = adapter !== null && (options.mergeLora ?? false);
  const weights = adapter !== null && merge ? mergeLoraHost(cfg, adapter.lora, base, adapter.adapters) : base;
  const storage = dtype === 'bf16' ? 'BF16' : 'F32';

  const parent = dirname(out);
  if (!existsSync(parent)) throw new UsageError(`--out: the parent folder ${parent} does not exist`);
  const staging = mkdtempSync(join(parent, `.${basename(out)}.export-`));
  try {
    const files = saveCheckpoint(
      staging,
      {
        configJson: checkpoint.configJson,
        tensors: toTensorMap(weights),
        tokenizerJson: checkpoint.tokenizerJson,
        tokenizerConfig: checkpoint.tokenizerConfig,
        chatTemplate: checkpoint.chatTemplate.source,
        generationConfig: checkpoint.generationConfig?.raw ?? null,
      },
      { dtype: storage },
    );
    if (adapter && !merge) {
      saveLoraAdapter(join(staging, ADAPTER_SUBDIR), cfg, adapter.lora, adapter.adapters, { baseModelNameOrPath: out, dtype: storage });
      files.push(`${ADAPTER_SUBDIR}/adapter_config.json`, `${ADAPTER_SUBDIR}/adapter_model.safetensors`);
    }
    replaceFolder(staging, out);
    return { dir: out, files, adapter: adapter === null ? 'none' : merge ? 'merged' : 'separate', dtype, params: countParams(cfg) };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Moves `staging` to `out`; an existing `out` (empty, or replaced with --force) is removed only once the new one is in place. */
function replaceFolder(staging: string, out: string): void {
  if (!existsSync(out)) {
    renameSync(staging, out);
    return;
  }
  const old = `${staging}.old`;
  renameSync(out, old);
  try {
    renameSync(staging, out);
  } catch (error) {
    renameSync(old, out);
    throw error;
  }
  rmSync(old, { recursive: true, force: true });
}

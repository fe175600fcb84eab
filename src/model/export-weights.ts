/**
 * The weights a checkpoint folder stands for. A full-weights folder is its own model; a LoRA folder
 * (the trainer's checkpoints, `spindle export` without --merge-lora) holds the frozen base model and
 * a PEFT adapter in `adapter/`, and stands for the base with the adapter merged in.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Checkpoint } from './checkpoint.ts';
import type { ModelConfig } from './config.ts';
import { ADAPTER_CONFIG_FILE, loadLoraAdapter } from './lora-io.ts';
import { mergeLoraHost, type LoraConfig } from './lora.ts';
import { paramShapes, type HostParams } from './params.ts';

/** The subfolder of a checkpoint that holds its LoRA adapter (PEFT layout). */
export const ADAPTER_SUBDIR = 'adapter';

export interface CheckpointAdapter {
  dir: string;
  lora: LoraConfig;
  adapters: HostParams;
  baseModelNameOrPath: string | null;
}

/** The adapter in `dir/adapter/`, validated against the model config; null when the folder has none. */
export function readCheckpointAdapter(dir: string, cfg: ModelConfig): CheckpointAdapter | null {
  const adapterDir = join(dir, ADAPTER_SUBDIR);
  if (!existsSync(join(adapterDir, ADAPTER_CONFIG_FILE))) return null;
  return { dir: adapterDir, ...loadLoraAdapter(adapterDir, cfg) };
}

/** The model's parameters from a loaded checkpoint (only the tensors the config uses), as stored. */
export function baseHostParams(checkpoint: Checkpoint, cfg: ModelConfig): HostParams {
  const host: HostParams = {};
  for (const name of Object.keys(paramShapes(cfg))) {
    const t = checkpoint.tensors[name];
    host[name] = { shape: t.shape, data: t.data };
  }
  return host;
}

/** The parameters the folder stands for: its weights, with its LoRA adapter merged when it has one. */
export function checkpointHostParams(checkpoint: Checkpoint, cfg: ModelConfig): HostParams {
  const base = baseHostParams(checkpoint, cfg);
  const adapter = readCheckpointAdapter(checkpoint.dir, cfg);
  return adapter ? mergeLoraHost(cfg, adapter.lora, base, adapter.adapters) : base;
}

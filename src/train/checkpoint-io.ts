/**
 * Checkpoint folders of a training run. A model folder is a Hugging Face checkpoint (config.json,
 * model.safetensors, tokenizer files with the chat template) that `model:DIR` and `run:RUN@STEP`
 * load. A training checkpoint is a model folder under `<runDir>/checkpoints/step-NNNNNN/` plus
 * `optimizer.safetensors` (AdamW's moments as `m.<name>` / `v.<name>`, float32) and
 * `trainer-state.json` (step, policy version, RNG state, config, metrics so far), and, while the run
 * averages its weights (weight-average.ts), `rl-weights.safetensors`: the weights RL continues from,
 * the model's being the average the run would hand over; at a last step where the run chose another
 * policy to hand over (handover-select.ts), `average-weights.safetensors`: the average it goes on
 * with should the run be resumed for more steps; after a reference reset (train-config.ts
 * loss.referenceResetEvery), `reference-weights.safetensors`: the KL's reference. Each is written to
 * a temporary folder and renamed into place, so a crash never leaves half a checkpoint.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { UsageError } from '../core/errors.ts';
import { loadCheckpoint, saveCheckpoint, validateTensors } from '../model/checkpoint.ts';
import { modelConfigToHf, parseModelConfig } from '../model/config.ts';
import { paramShapes, type HostParams } from '../model/params.ts';
import { readSafetensors, writeSafetensors, type TensorMap } from '../model/safetensors.ts';
import type { AdamWState } from '../model/adamw.ts';
import { ADAPTER_SUBDIR } from '../model/export-weights.ts';
import { saveLoraAdapter } from '../model/lora-io.ts';
import type { LoraConfig } from '../model/lora.ts';
import { modelAssets, type ModelAssets } from './default-model.ts';

export const OPTIMIZER_FILE = 'optimizer.safetensors';
export const TRAINER_STATE_FILE = 'trainer-state.json';
export const RL_WEIGHTS_FILE = 'rl-weights.safetensors';
export const AVERAGE_WEIGHTS_FILE = 'average-weights.safetensors';
export const REFERENCE_WEIGHTS_FILE = 'reference-weights.safetensors';
export const LORA_ADAPTERS_FILE = 'rl-lora-adapters.safetensors';

function tensorMap(params: HostParams): TensorMap {
  const out: TensorMap = {};
  for (const [name, t] of Object.entries(params)) out[name] = { dtype: 'F32', shape: t.shape, data: t.data };
  return out;
}

/** Writes a Hugging Face checkpoint folder (float32 weights). */
export function saveModelFolder(dir: string, assets: ModelAssets, params: HostParams): string[] {
  return saveCheckpoint(dir, {
    configJson: modelConfigToHf(assets.cfg),
    tensors: tensorMap(params),
    tokenizerJson: assets.tokenizerJson,
    tokenizerConfig: assets.tokenizerConfig,
    generationConfig: {
      eos_token_id: assets.stopTokenIds.length === 1 ? assets.stopTokenIds[0] : assets.stopTokenIds,
      ...(assets.answerBudget === undefined ? {} : { max_new_tokens: assets.answerBudget }),
    },
  });
}

/** Reads a model folder back: its assets and its weights on the host. */
export function loadModelFolder(dir: string): { assets: ModelAssets; params: HostParams } {
  const checkpoint = loadCheckpoint(dir);
  const cfg = parseModelConfig(checkpoint.configJson, join(dir, 'config.json'));
  const assets = modelAssets(cfg, checkpoint.tokenizerJson, checkpoint.tokenizerConfig, dir);
  assets.stopTokenIds = checkpoint.stopTokenIds;
  const budget = checkpoint.generationConfig?.maxNewTokens;
  if (budget !== undefined) assets.answerBudget = budget;
  const params: HostParams = {};
  for (const name of Object.keys(paramShapes(cfg))) {
    const t = checkpoint.tensors[name];
    params[name] = { shape: [...t.shape], data: t.data };
  }
  return { assets, params };
}

/** `checkpoints/step-000042`, relative to the run folder. */
export function checkpointPath(step: number): string {
  return join('checkpoints', `step-${String(step).padStart(6, '0')}`);
}

export interface TrainCheckpoint<S> {
  assets: ModelAssets;
  /** The model's weights: the policy the run hands over at this step. */
  params: HostParams;
  /** The weights RL continues from, when they differ from `params` (a weight average, a chosen step); else null. */
  rlParams?: HostParams | null;
  /** The weight average under way, when `params` holds another policy chosen to hand over; else null. */
  averageParams?: HostParams | null;
  /** The KL's reference when a reset replaced the warm start (trainer-state.ts `reference`); else null. */
  referenceParams?: HostParams | null;
  /** RL's LoRA adapters (train.lora; rl-weights.ts), which the optimiser state then belongs to; else null. */
  loraAdapters?: HostParams | null;
  /**
   * LoRA training: `params` is the frozen base and this adapter (written in PEFT's layout under
   * adapter/) is trained; the folder stands for the two merged (export-weights.ts). Absent: full weights.
   */
  adapter?: { lora: LoraConfig; adapters: HostParams; baseModelNameOrPath: string | null } | null;
  /** Null for a checkpoint taken before any optimiser existed (the random init). */
  optimizer: AdamWState | null;
  state: S;
}

/** Writes the whole folder under a temporary name, then renames it into place (replacing an older one). */
function writeAtomically(dir: string, write: (tmp: string) => void): void {
  const tmp = `${dir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  write(tmp);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
}

/** Saves a training checkpoint in `<runDir>/checkpoints/step-NNNNNN/`; returns its path relative to runDir. */
export function saveTrainCheckpoint<S>(runDir: string, step: number, checkpoint: TrainCheckpoint<S>): string {
  const dir = join(runDir, checkpointPath(step));
  writeAtomically(dir, (tmp) => {
    saveModelFolder(tmp, checkpoint.assets, checkpoint.params);
    if (checkpoint.rlParams) writeSafetensors(join(tmp, RL_WEIGHTS_FILE), tensorMap(checkpoint.rlParams), { metadata: { format: 'pt' } });
    if (checkpoint.averageParams) writeSafetensors(join(tmp, AVERAGE_WEIGHTS_FILE), tensorMap(checkpoint.averageParams), { metadata: { format: 'pt' } });
    if (checkpoint.referenceParams) writeSafetensors(join(tmp, REFERENCE_WEIGHTS_FILE), tensorMap(checkpoint.referenceParams), { metadata: { format: 'pt' } });
    if (checkpoint.loraAdapters) writeSafetensors(join(tmp, LORA_ADAPTERS_FILE), tensorMap(checkpoint.loraAdapters), { metadata: { format: 'pt' } });
    if (checkpoint.adapter) {
      const { lora, adapters, baseModelNameOrPath } = checkpoint.adapter;
      saveLoraAdapter(join(tmp, ADAPTER_SUBDIR), checkpoint.assets.cfg, lora, adapters, { baseModelNameOrPath });
    }
    if (checkpoint.optimizer) {
      const { m, v, step: optimizerStep, config } = checkpoint.optimizer;
      const moments: TensorMap = {};
      for (const [name, t] of Object.entries(tensorMap(m))) moments[`m.${name}`] = t;
      for (const [name, t] of Object.entries(tensorMap(v))) moments[`v.${name}`] = t;
      writeSafetensors(join(tmp, OPTIMIZER_FILE), moments, {
        metadata: { format: 'pt', step: String(optimizerStep), config: JSON.stringify(config) },
      });
    }
    writeFileSync(join(tmp, TRAINER_STATE_FILE), JSON.stringify(checkpoint.state, null, 2) + '\n');
  });
  return relative(runDir, dir);
}

/** Reads a training checkpoint folder; `parseState` validates trainer-state.json. */
export function loadTrainCheckpoint<S>(dir: string, parseState: (json: unknown, label: string) => S): TrainCheckpoint<S> {
  const statePath = join(dir, TRAINER_STATE_FILE);
  if (!existsSync(statePath)) throw new UsageError(`${dir}: no ${TRAINER_STATE_FILE} (not a training checkpoint)`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(statePath, 'utf8'));
  } catch (error) {
    throw new UsageError(`${statePath}: not valid JSON (${(error as Error).message})`);
  }
  const state = parseState(json, statePath);
  const { assets, params } = loadModelFolder(dir);
  const rlParams = weightsBeside(dir, RL_WEIGHTS_FILE, assets.cfg);
  const averageParams = weightsBeside(dir, AVERAGE_WEIGHTS_FILE, assets.cfg);
  const referenceParams = weightsBeside(dir, REFERENCE_WEIGHTS_FILE, assets.cfg);
  const adaptersPath = join(dir, LORA_ADAPTERS_FILE);
  let loraAdapters: HostParams | null = null;
  if (existsSync(adaptersPath)) {
    loraAdapters = {};
    for (const [name, t] of Object.entries(readSafetensors(adaptersPath).tensors)) loraAdapters[name] = { shape: [...t.shape], data: t.data };
  }
  const optimizerPath = join(dir, OPTIMIZER_FILE);
  let optimizer: AdamWState | null = null;
  if (existsSync(optimizerPath)) {
    const { tensors, metadata } = readSafetensors(optimizerPath);
    const m: HostParams = {};
    const v: HostParams = {};
    // The moments of what the optimiser trained: the adapters under LoRA, else the model's weights.
    for (const name of Object.keys(loraAdapters ?? params)) {
      const mt = tensors[`m.${name}`];
      const vt = tensors[`v.${name}`];
      if (!mt || !vt) throw new UsageError(`${optimizerPath}: the moments of "${name}" are missing`);
      m[name] = { shape: [...mt.shape], data: mt.data };
      v[name] = { shape: [...vt.shape], data: vt.data };
    }
    const step = Number(metadata?.step);
    if (!Number.isSafeInteger(step) || step < 0) throw new UsageError(`${optimizerPath}: metadata "step" must be a non-negative integer`);
    let config: AdamWState['config'];
    try {
      config = JSON.parse(metadata?.config ?? '') as AdamWState['config'];
    } catch {
      throw new UsageError(`${optimizerPath}: metadata "config" is not JSON`);
    }
    optimizer = { step, config, m, v };
  }
  return { assets, params, rlParams, averageParams, referenceParams, loraAdapters, optimizer, state };
}

/** Weights kept beside a checkpoint's model (the same tensors, checked against its config), or null when the file is absent. */
function weightsBeside(dir: string, file: string, cfg: ModelAssets['cfg']): HostParams | null {
  const path = join(dir, file);
  if (!existsSync(path)) return null;
  const { tensors } = readSafetensors(path);
  const shapes = paramShapes(cfg);
  validateTensors(tensors, shapes, path);
  const out: HostParams = {};
  for (const name of Object.keys(shapes)) out[name] = { shape: [...tensors[name].shape], data: tensors[name].data };
  return out;
}

/**
 * RL's own weights at a training checkpoint of a model of `cfg`: `rl-weights.safetensors` where the
 * model's differ from them (the model folder is then not read), else the model's.
 */
export function loadRlWeights(dir: string, cfg: ModelAssets['cfg']): HostParams {
  return weightsBeside(dir, RL_WEIGHTS_FILE, cfg) ?? loadModelFolder(dir).params;
}

/**
 * LoRA adapter folders as PEFT writes them (what vLLM's --lora-modules and PEFT's
 * PeftModel.from_pretrained read): adapter_config.json + adapter_model.safetensors.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import type { ModelConfig } from './config.ts';
import { LORA_TARGETS, loraShapes, validateLoraConfig, type LoraConfig, type LoraTarget } from './lora.ts';
import type { HostParams } from './params.ts';
import { readSafetensors, writeSafetensors, type FloatDtype } from './safetensors.ts';

export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';

/** adapter_config.json with every field PEFT (0.13+) writes for a plain LoRA. */
export function adapterConfigJson(lora: LoraConfig, baseModelNameOrPath: string | null): Record<string, unknown> {
  return {
    alpha_pattern: {},
    auto_mapping: null,
    base_model_name_or_path: baseModelNameOrPath,
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layer_replication: null,
    layers_pattern: null,
    layers_to_transform: null,
    loftq_config: {},
    lora_alpha: lora.alpha,
    lora_dropout: lora.dropout,
    megatron_config: null,
    megatron_core: 'megatron.core',
    modules_to_save: null,
    peft_type: 'LORA',
    r: lora.r,
    rank_pattern: {},
    revision: null,
    target_modules: [...lora.targetModules].sort(),
    task_type: 'CAUSAL_LM',
    use_dora: false,
    use_rslora: lora.useRslora ?? false,
  };
}

const emptyOrNull = (what: string) =>
  z.union([z.null(), z.undefined(), z.object({}).strict(), z.array(z.never())], { error: `${what} is not supported (leave it empty)` });

const adapterConfigSchema = z
  .object({
    peft_type: z.literal('LORA', { error: 'only LORA adapters are supported' }),
    r: z.number().int().positive(),
    lora_alpha: z.number().positive(),
    lora_dropout: z.number().min(0).lt(1).default(0),
    target_modules: z.array(z.enum(LORA_TARGETS)).min(1),
    bias: z.literal('none', { error: 'only bias "none" is supported' }).default('none'),
    fan_in_fan_out: z.literal(false, { error: 'fan_in_fan_out true is not supported' }).default(false),
    use_rslora: z.boolean().default(false),
    use_dora: z.literal(false, { error: 'DoRA is not supported' }).default(false),
    modules_to_save: emptyOrNull('modules_to_save'),
    layers_to_transform: emptyOrNull('layers_to_transform'),
    rank_pattern: emptyOrNull('rank_pattern'),
    alpha_pattern: emptyOrNull('alpha_pattern'),
    base_model_name_or_path: z.string().nullish(),
  })
  .loose();

export function parseAdapterConfig(json: unknown, label = ADAPTER_CONFIG_FILE): { lora: LoraConfig; baseModelNameOrPath: string | null } {
  const parsed = adapterConfigSchema.safeParse(json);
  if (!parsed.success) throw new UsageError(describeZodError(parsed.error, label));
  const c = parsed.data;
  const lora: LoraConfig = {
    r: c.r,
    alpha: c.lora_alpha,
    dropout: c.lora_dropout,
    targetModules: c.target_modules as LoraTarget[],
    useRslora: c.use_rslora,
  };
  validateLoraConfig(lora, label);
  return { lora, baseModelNameOrPath: c.base_model_name_or_path ?? null };
}

export type SaveAdapterOptions = { baseModelNameOrPath?: string | null; dtype?: FloatDtype };

/** Writes adapter_config.json and adapter_model.safetensors (PEFT tensor names) into `dir`. */
export function saveLoraAdapter(dir: string, cfg: ModelConfig, lora: LoraConfig, adapters: HostParams, options: SaveAdapterOptions = {}): void {
  validateLoraConfig(lora);
  const expected = loraShapes(cfg, lora);
  checkAdapterTensors(adapters, expected, 'saveLoraAdapter');
  mkdirSync(dir, { recursive: true });
  const dtype = options.dtype ?? 'F32';
  const tensors = Object.fromEntries(Object.keys(expected).map((name) => [name, { dtype, shape: adapters[name].shape, data: adapters[name].data }]));
  writeSafetensors(join(dir, ADAPTER_WEIGHTS_FILE), tensors);
  writeFileSync(join(dir, ADAPTER_CONFIG_FILE), JSON.stringify(adapterConfigJson(lora, options.baseModelNameOrPath ?? null), null, 2) + '\n');
}

/** Reads an adapter folder and checks every tensor against the model config. */
export function loadLoraAdapter(dir: string, cfg: ModelConfig): { lora: LoraConfig; adapters: HostParams; baseModelNameOrPath: string | null } {
  const configPath = join(dir, ADAPTER_CONFIG_FILE);
  const weightsPath = join(dir, ADAPTER_WEIGHTS_FILE);
  if (!existsSync(configPath)) throw new UsageError(`${configPath}: missing`);
  if (!existsSync(weightsPath)) throw new UsageError(`${weightsPath}: missing`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(configPath, 'utf8'));
  } catch (e) {
    throw new UsageError(`${configPath}: not valid JSON (${(e as Error).message})`);
  }
  const { lora, baseModelNameOrPath } = parseAdapterConfig(json, configPath);
  const { tensors } = readSafetensors(weightsPath);
  return { lora, adapters: checkedAdapters(tensors, cfg, lora, weightsPath), baseModelNameOrPath };
}

/**
 * The adapter tensors `lora` gives this model, each checked, in the order initLora makes them (a
 * gradient norm sums in that order, so a resumed run must keep it); `label` names where they came from.
 */
export function checkedAdapters(tensors: HostParams, cfg: ModelConfig, lora: LoraConfig, label: string): HostParams {
  const expected = loraShapes(cfg, lora);
  checkAdapterTensors(tensors, expected, label);
  const adapters: HostParams = {};
  for (const name of Object.keys(expected)) adapters[name] = { shape: tensors[name].shape, data: tensors[name].data };
  return adapters;
}

function checkAdapterTensors(tensors: Record<string, { shape: number[] }>, expected: Record<string, number[]>, label: string): void {
  for (const [name, shape] of Object.entries(expected)) {
    const t = tensors[name];
    if (!t) throw new UsageError(`${label}: tensor "${name}" ${JSON.stringify(shape)} is missing`);
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new UsageError(`${label}: tensor "${name}" has shape ${JSON.stringify(t.shape)}, expected ${JSON.stringify(shape)}`);
    }
  }
  const extra = Object.keys(tensors).filter((n) => !Object.hasOwn(expected, n));
  if (extra.length > 0) throw new UsageError(`${label}: unexpected tensor "${extra[0]}" (not a LoRA A/B of the configured target_modules)`);
}

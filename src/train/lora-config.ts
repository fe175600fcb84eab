/** The `lora` field of the train configs (online and offline): LoRA adapters over frozen weights, or null for full weights. */
import { z } from 'zod';
import { LORA_TARGETS, validateLoraConfig, type LoraConfig } from '../model/lora.ts';

export const loraConfigSchema = z
  .strictObject({
    r: z.number().int().min(1).max(1024),
    alpha: z.number().positive(),
    targetModules: z.array(z.enum(LORA_TARGETS)).min(1).default([...LORA_TARGETS]),
    useRslora: z.boolean().default(false),
  })
  .nullable()
  .default(null);

/**
 * The LoRA a run trains from its `lora` field (`label` names it in errors), or null for full weights.
 * Without dropout: the adapters act as merged weights in the forward.
 */
export function trainedLora(config: z.output<typeof loraConfigSchema>, label: string): LoraConfig | null {
  if (!config) return null;
  const lora = { ...config, dropout: 0 };
  validateLoraConfig(lora, label);
  return lora;
}

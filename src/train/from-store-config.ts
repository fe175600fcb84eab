/** Settings of offline training from stored groups, plain JSON; a bad field is a UsageError naming it. */
import { z } from 'zod';
import { advantageConfigSchema } from '../advantage/compute.ts';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import { adamwConfigSchema } from '../model/adamw.ts';
import { loraConfigSchema } from './lora-config.ts';
import { lossConfigSchema } from './loss-config.ts';
import { samplesConfigSchema } from './samples-config.ts';

export const offlineTrainConfigSchema = z.strictObject({
  /** Passes over the selected samples; each takes π_old afresh from the weights at its start. */
  steps: z.number().int().min(1).default(4),
  seed: z.number().int().min(0).default(0),
  /** AdamW's other settings (betas, weight decay, gradient clipping, schedule; adamw.ts). */
  optimizer: adamwConfigSchema.omit({ lr: true }).strict().partial().default({}),
  lr: z.number().positive().default(1e-5),
  /** Mini-batches per step (one optimiser update per layout each fills). */
  miniBatches: z.number().int().min(1).default(1),
  /** Rows per layout and row length behind the shared prefix (rl-batch.ts); longer samples are counted as too long. */
  rows: z.number().int().min(1).default(8),
  rowLength: z.number().int().min(8).default(1024),
  loss: lossConfigSchema.partial().default({}),
  /**
   * The temperature the calls' logprobs are relative to: the loss scores the policy at it,
   * softmax(logits / T), as the online trainer does its rollouts'. Default: the one every trained
   * call recorded (a call that recorded none counts as 1, the OpenAI API's default). Set it for a
   * backend whose logprobs are not after temperature, or to train calls sampled at several.
   */
  temperature: z.number().gt(0).max(10).optional(),
  /**
   * Train LoRA adapters (W + scale · B A on each target projection, B starting at 0) over the frozen
   * model instead of every weight; null: full weights. The checkpoint then holds the base model and
   * the adapter in PEFT's layout (adapter/), which `run:RUN` loads merged and `spindle export` writes
   * separate or merged. The adapters act as merged weights in the forward, so without dropout.
   */
  lora: loraConfigSchema,
  advantage: advantageConfigSchema.optional(),
  samples: samplesConfigSchema.partial().default({}),
});

export type OfflineTrainConfig = z.input<typeof offlineTrainConfigSchema>;
export type OfflineTrainSettings = z.output<typeof offlineTrainConfigSchema>;

export function parseOfflineTrainConfig(config: unknown, label = 'offline'): OfflineTrainSettings {
  const parsed = offlineTrainConfigSchema.safeParse(config ?? {});
  if (!parsed.success) throw new UsageError(`offline training options: ${describeZodError(parsed.error, label)}`);
  return parsed.data;
}

/** generation_config.json: the sampling defaults and extra end-of-sequence ids a checkpoint ships. */
import { z } from 'zod';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';

const tokenId = z.number().int().min(0);

/** The fields Spindle uses; other fields are kept as they are in `raw`. */
const generationConfigSchema = z.looseObject({
  eos_token_id: z.union([tokenId, z.array(tokenId), z.null()]).optional(),
  bos_token_id: z.union([tokenId, z.null()]).optional(),
  pad_token_id: z.union([tokenId, z.null()]).optional(),
  temperature: z.number().min(0).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  do_sample: z.boolean().optional(),
  max_new_tokens: z.number().int().min(1).optional(),
});

export interface GenerationConfig {
  /** The file as read (written back unchanged by saveCheckpoint). */
  raw: Record<string, unknown>;
  eosTokenIds: number[];
  temperature?: number;
  topP?: number;
  topK?: number;
  /** max_new_tokens: the longest answer the checkpoint is meant to give (a train run writes its answer budget). */
  maxNewTokens?: number;
}

export function parseGenerationConfig(json: unknown, label = 'generation_config.json'): GenerationConfig {
  const parsed = generationConfigSchema.safeParse(json);
  if (!parsed.success) throw new UsageError(`${label}: ${describeZodError(parsed.error)}`);
  const data = parsed.data;
  const eos = data.eos_token_id;
  const config: GenerationConfig = {
    raw: json as Record<string, unknown>,
    eosTokenIds: eos === undefined || eos === null ? [] : Array.isArray(eos) ? eos : [eos],
  };
  if (data.temperature !== undefined) config.temperature = data.temperature;
  if (data.top_p !== undefined) config.topP = data.top_p;
  if (data.top_k !== undefined) config.topK = data.top_k;
  if (data.max_new_tokens !== undefined) config.maxNewTokens = data.max_new_tokens;
  return config;
}

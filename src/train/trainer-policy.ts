/** The embedded policy the trainer samples with: its model assets, the current weights and their version. */
import type { Params } from '../model/params.ts';
import { EmbeddedPolicy } from '../policy/embedded.ts';
import type { ModelAssets } from './default-model.ts';

export interface TrainerPolicyOptions {
  name: string;
  modelId: string;
  version: number;
  /** Sampler rows per decode batch. */
  maxBatchRows: number;
}

/** A policy on `params` (borrowed: the policy takes its own reference). */
export function trainerPolicy(assets: ModelAssets, params: Params, options: TrainerPolicyOptions): EmbeddedPolicy {
  return new EmbeddedPolicy(
    {
      cfg: assets.cfg,
      params,
      tokenizer: assets.tokenizer,
      chatTemplate: assets.chatTemplate,
      stopTokenIds: assets.stopTokenIds,
      name: options.name,
      modelId: options.modelId,
      policyVersion: options.version,
    },
    { maxBatchRows: options.maxBatchRows, maxConcurrentBatches: 1 },
  );
}

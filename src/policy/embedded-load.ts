/**
 * `model:DIR`: the embedded policy for a checkpoint folder (config.json, safetensors, tokenizer, chat template;
 * a LoRA adapter in `adapter/` is merged in).
 */
import { basename, join, resolve } from 'node:path';
import { loadCheckpoint } from '../model/checkpoint.ts';
import { parseModelConfig } from '../model/config.ts';
import { initEngine, tree } from '../model/engine.ts';
import { checkpointHostParams } from '../model/export-weights.ts';
import { toParams } from '../model/params.ts';
import { EmbeddedPolicy, type EmbeddedPolicyOptions } from './embedded.ts';

export type LoadEmbeddedOptions = EmbeddedPolicyOptions & {
  /** Engine threads when this call starts the engine (default: all cores). */
  threads?: number;
  /** Extra chat-template variables, e.g. `{ enable_thinking: false }`. */
  templateExtra?: Record<string, unknown>;
  /** The policy's name (default `model:DIR`), e.g. `run:RUN@STEP`. */
  name?: string;
  /** The weights' version, reported on completions (default 0). */
  policyVersion?: number;
};

/** Starts the engine (once), loads and validates the checkpoint, returns its policy. */
export async function loadEmbeddedPolicy(dir: string, options: LoadEmbeddedOptions = {}): Promise<EmbeddedPolicy> {
  await initEngine(options.threads === undefined ? {} : { threads: options.threads });
  const checkpoint = loadCheckpoint(dir);
  const cfg = parseModelConfig(checkpoint.configJson, join(dir, 'config.json'));
  // A LoRA checkpoint (base + adapter/) is served with its adapter merged.
  const params = toParams(checkpointHostParams(checkpoint, cfg));
  const policy = new EmbeddedPolicy(
    {
      cfg,
      params,
      tokenizer: checkpoint.tokenizer,
      chatTemplate: checkpoint.chatTemplate,
      stopTokenIds: checkpoint.stopTokenIds,
      name: options.name ?? `model:${dir}`,
      modelId: basename(resolve(dir)),
      templateExtra: options.templateExtra,
      policyVersion: options.policyVersion,
      answerBudget: checkpoint.generationConfig?.maxNewTokens,
    },
    options,
  );
  tree.dispose(params); // the policy holds its own reference
  return policy;
}

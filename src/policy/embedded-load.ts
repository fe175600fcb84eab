/** `model:DIR`: the embedded policy for a checkpoint folder (config.json, safetensors, tokenizer, chat template). */
import { basename, join, resolve } from 'node:path';
import { loadCheckpoint } from '../model/checkpoint.ts';
import { parseModelConfig } from '../model/config.ts';
import { initEngine, tree } from '../model/engine.ts';
import { paramShapes, toParams, type HostParams } from '../model/params.ts';
import { EmbeddedPolicy, type EmbeddedPolicyOptions } from './embedded.ts';

export type LoadEmbeddedOptions = EmbeddedPolicyOptions & {
  /** Engine threads when this call starts the engine (default: all cores). */
  threads?: number;
  /** Extra chat-template variables, e.g. `{ enable_thinking: false }`. */
  templateExtra?: Record<string, unknown>;
};

/** Starts the engine (once), loads and validates the checkpoint, returns its policy. */
export async function loadEmbeddedPolicy(dir: string, options: LoadEmbeddedOptions = {}): Promise<EmbeddedPolicy> {
  await initEngine(options.threads === undefined ? {} : { threads: options.threads });
  const checkpoint = loadCheckpoint(dir);
  const cfg = parseModelConfig(checkpoint.configJson, join(dir, 'config.json'));
  const host: HostParams = {};
  for (const name of Object.keys(paramShapes(cfg))) {
    const t = checkpoint.tensors[name];
    host[name] = { shape: t.shape, data: t.data };
  }
  const params = toParams(host);
  const policy = new EmbeddedPolicy(
    {
      cfg,
      params,
      tokenizer: checkpoint.tokenizer,
      chatTemplate: checkpoint.chatTemplate,
      stopTokenIds: checkpoint.stopTokenIds,
      name: `model:${dir}`,
      modelId: basename(resolve(dir)),
      templateExtra: options.templateExtra,
    },
    options,
  );
  tree.dispose(params); // the policy holds its own reference
  return policy;
}

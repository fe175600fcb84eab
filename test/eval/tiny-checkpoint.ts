/** Tiny random checkpoints built in the tests themselves: the default tokenizer trained on Blackjack's text, seeded weights. */
import { join } from 'node:path';
import { systemPrompt } from '../../src/agent/prompt.ts';
import { Rng } from '../../src/core/random.ts';
import { BlackjackEnv } from '../../src/envs/blackjack/env.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import { loadCheckpoint, saveCheckpoint } from '../../src/model/checkpoint.ts';
import { modelConfigToHf, parseModelConfig, type ModelConfig } from '../../src/model/config.ts';
import { np } from '../../src/model/engine.ts';
import { ADAPTER_SUBDIR, checkpointHostParams } from '../../src/model/export-weights.ts';
import { saveLoraAdapter } from '../../src/model/lora-io.ts';
import { initLoraHost, type LoraConfig } from '../../src/model/lora.ts';
import { initHostParams, toParams, type HostParams } from '../../src/model/params.ts';
import { forwardInputs, forwardLogits } from '../../src/model/transformer.ts';
import { trainDefaultTokenizer, type TokenizerFiles } from '../../src/model/tokenizer/default-tokenizer.ts';
import { tokenizerFromJson } from '../../src/model/tokenizer/tokenizer.ts';

export interface TinyModel {
  cfg: ModelConfig;
  host: HostParams;
  files: TokenizerFiles;
}

let tokenizerFiles: TokenizerFiles | null = null;

/** Blackjack's system prompt, some deals and the two tool calls: the text the tiny models read and write. */
function blackjackCorpus(): string[] {
  const options = blackjackSpec.options.parse({});
  const env = new BlackjackEnv(options);
  const deals = Array.from({ length: 40 }, (_, seed) => env.reset(seed));
  return [
    systemPrompt(blackjackSpec.instructions(options), deals[0].tools),
    ...deals.map((d) => d.observation),
    '<tool_call>{"name": "hit", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "stick", "arguments": {}}</tool_call>',
  ];
}

/** The default tokenizer trained on Blackjack's text (short prompts for a tiny context). */
export function blackjackTokenizer(): TokenizerFiles {
  tokenizerFiles ??= trainDefaultTokenizer(blackjackCorpus(), { vocabSize: 512 });
  return tokenizerFiles;
}

/** A qwen3-shaped model of a few thousand parameters with seeded random weights. */
export function tinyModel(seed: number): TinyModel {
  const files = blackjackTokenizer();
  const tokenizer = tokenizerFromJson(files.tokenizerJson, files.tokenizerConfig);
  const cfg = parseModelConfig({
    model_type: 'qwen3',
    vocab_size: tokenizer.vocabSize,
    hidden_size: 16,
    intermediate_size: 32,
    num_hidden_layers: 2,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    head_dim: 8,
    max_position_embeddings: 1024,
    tie_word_embeddings: true,
    eos_token_id: tokenizer.eosTokenId,
  });
  return { cfg, host: initHostParams(cfg, seed), files };
}

/** Writes the model as a checkpoint folder (config.json, model.safetensors, tokenizer files with the chat template). */
export function saveTinyModel(dir: string, model: TinyModel, host: HostParams = model.host): void {
  saveCheckpoint(dir, {
    configJson: modelConfigToHf(model.cfg),
    tensors: Object.fromEntries(Object.entries(host).map(([name, t]) => [name, { dtype: 'F32' as const, shape: t.shape, data: t.data }])),
    tokenizerJson: model.files.tokenizerJson,
    tokenizerConfig: model.files.tokenizerConfig,
    generationConfig: { eos_token_id: model.cfg.eosTokenIds, temperature: 0.7, top_p: 0.9 },
  });
}

/** A small LoRA on attention and MLP projections. */
export const TEST_LORA: LoraConfig = { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj', 'v_proj', 'o_proj', 'down_proj'] };

/** Adapters as after some training: A as PEFT initialises it, B random (not zero), so the adapter changes the model. */
export function tinyLoraAdapters(cfg: ModelConfig, seed: number, lora: LoraConfig = TEST_LORA): HostParams {
  const host = initLoraHost(cfg, lora, seed);
  const rng = new Rng(seed, 77);
  for (const [name, t] of Object.entries(host)) if (name.endsWith('lora_B.weight')) t.data.forEach((_, i) => (t.data[i] = 0.5 * rng.normal()));
  return host;
}

/** A LoRA training checkpoint's model part: the frozen base model files plus the adapter in adapter/ (PEFT layout). */
export function saveTinyLoraModel(dir: string, model: TinyModel, adapters: HostParams, lora: LoraConfig = TEST_LORA): void {
  saveTinyModel(dir, model);
  saveLoraAdapter(join(dir, ADAPTER_SUBDIR), model.cfg, lora, adapters, { baseModelNameOrPath: null });
}

/** Logits [T * V] of one token sequence (the engine must be started); with `lora`, through the training forward's adapter path. */
export async function logitsOf(cfg: ModelConfig, host: HostParams, tokens: number[], lora?: { config: LoraConfig; adapters: HostParams }): Promise<Float32Array> {
  const { rope, mask } = forwardInputs(cfg, tokens.length);
  const ids = np.array(new Int32Array(tokens), { dtype: np.int32 }).reshape([1, tokens.length]);
  const runtime = lora ? { config: lora.config, adapters: toParams(lora.adapters) } : undefined;
  return (await forwardLogits(cfg, toParams(host), ids, rope, mask, runtime).data()) as Float32Array;
}

/** What `model:DIR` loads from a folder: its config and parameters (adapter merged), on the loader's own path. */
export function loadedHostParams(dir: string): { cfg: ModelConfig; host: HostParams } {
  const checkpoint = loadCheckpoint(dir);
  const cfg = parseModelConfig(checkpoint.configJson);
  return { cfg, host: checkpointHostParams(checkpoint, cfg) };
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} != ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

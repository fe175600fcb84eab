/** `spindle export`: the folder loads back through model:DIR's loader with the same logits; LoRA merged or as a PEFT adapter; bf16. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { loadCheckpoint } from '../../src/model/checkpoint.ts';
import { initEngine } from '../../src/model/engine.ts';
import { exportCheckpoint } from '../../src/model/export.ts';
import { readSafetensorsHeader } from '../../src/model/safetensors.ts';
import type { EmbeddedPolicy } from '../../src/policy/embedded.ts';
import '../../src/policy/embedded-register.ts';
import { resolvePolicy } from '../../src/policy/resolve.ts';
import { storeWithRun } from '../eval/run-store.ts';
import { loadedHostParams, logitsOf, maxAbsDiff, saveTinyLoraModel, saveTinyModel, TEST_LORA, tinyLoraAdapters, tinyModel } from '../eval/tiny-checkpoint.ts';

const TOKENS = [5, 17, 42, 3, 99, 8, 250, 11];

before(async () => {
  await initEngine({ threads: 1 });
});

/** A trainer checkpoint also holds its optimizer and trainer state; an export leaves them out. */
function withTrainerFiles(write: (dir: string) => void) {
  return (dir: string) => {
    write(dir);
    writeFileSync(join(dir, 'trainer-state.json'), '{"step": 1}\n');
    writeFileSync(join(dir, 'optimizer.safetensors'), '');
  };
}

test('a full-weights checkpoint exports to a Hugging Face folder that loads back with the same logits', async () => {
  const model = tinyModel(11);
  const run = await storeWithRun([4], withTrainerFiles((dir) => saveTinyModel(dir, model)));
  const out = join(run.root, 'exported');
  const result = exportCheckpoint(run.dirs[4], out);
  assert.equal(result.adapter, 'none');
  assert.deepEqual(readdirSync(out).sort(), ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
  const json = (dir: string, file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8'));
  assert.deepEqual(json(out, 'generation_config.json'), json(run.dirs[4], 'generation_config.json'));
  assert.deepEqual(json(out, 'tokenizer.json'), json(run.dirs[4], 'tokenizer.json'));
  assert.deepEqual([...result.files].sort(), readdirSync(out).sort());
  const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
  assert.equal(config.model_type, 'qwen3');
  assert.equal(config.torch_dtype, 'float32');
  assert.equal(typeof JSON.parse(readFileSync(join(out, 'tokenizer_config.json'), 'utf8')).chat_template, 'string');

  const source = loadedHostParams(run.dirs[4]);
  const exported = loadedHostParams(out);
  assert.deepEqual(await logitsOf(exported.cfg, exported.host, TOKENS), await logitsOf(source.cfg, source.host, TOKENS));

  // And through the policy: model:OUT decodes exactly as model:SOURCE.
  const ask = async (dir: string) => {
    const policy = (await resolvePolicy(`model:${dir}`, { spec: {} as never, options: {} })) as EmbeddedPolicy;
    const [c] = await policy.complete({ messages: [{ role: 'user', content: 'Your hand: 9, 9 (sum 18, no usable ace). Dealer shows: 10.' }], tools: [], maxTokens: 5, temperature: 0 });
    await policy.close();
    return c;
  };
  const [a, b] = [await ask(out), await ask(run.dirs[4])];
  assert.deepEqual(a.completionTokenIds, b.completionTokenIds);
  assert.deepEqual(a.modelLogprobs, b.modelLogprobs);
});

test('a LoRA checkpoint exports as base + PEFT adapter, or merged; both equal the base run with its adapter within 1e-5', async () => {
  const model = tinyModel(12);
  const adapters = tinyLoraAdapters(model.cfg, 13);
  const run = await storeWithRun([8], withTrainerFiles((dir) => saveTinyLoraModel(dir, model, adapters)));
  const separate = join(run.root, 'with-adapter');
  const merged = join(run.root, 'merged');
  assert.equal(exportCheckpoint(run.dirs[8], separate).adapter, 'separate');
  assert.equal(exportCheckpoint(run.dirs[8], merged, { mergeLora: true }).adapter, 'merged');

  assert.deepEqual(readdirSync(join(separate, 'adapter')).sort(), ['adapter_config.json', 'adapter_model.safetensors']);
  const adapterConfig = JSON.parse(readFileSync(join(separate, 'adapter', 'adapter_config.json'), 'utf8'));
  assert.equal(adapterConfig.peft_type, 'LORA');
  assert.equal(adapterConfig.r, TEST_LORA.r);
  assert.equal(adapterConfig.lora_alpha, TEST_LORA.alpha);
  assert.deepEqual(adapterConfig.target_modules, [...TEST_LORA.targetModules].sort());
  assert.equal(adapterConfig.base_model_name_or_path, separate, 'the adapter names the base model beside it');
  assert.ok(readSafetensorsHeader(join(separate, 'adapter', 'adapter_model.safetensors')).entries.every((e) => e.name.startsWith('base_model.model.model.layers.')));
  assert.equal(existsSync(join(merged, 'adapter')), false);

  // The reference: the frozen base with the adapter applied by the training forward.
  const unmerged = await logitsOf(model.cfg, model.host, TOKENS, { config: TEST_LORA, adapters });
  const baseOnly = await logitsOf(model.cfg, model.host, TOKENS);
  assert.ok(maxAbsDiff(unmerged, baseOnly) > 1e-3, 'the adapter must change the logits');
  for (const dir of [merged, separate]) {
    const loaded = loadedHostParams(dir);
    const diff = maxAbsDiff(await logitsOf(loaded.cfg, loaded.host, TOKENS), unmerged);
    assert.ok(diff < 1e-5, `${dir}: ${diff}`);
  }
  // The separate export's model.safetensors is the frozen base itself; the merged one's q_proj carries the adapter.
  const q = 'model.layers.0.self_attn.q_proj.weight';
  assert.deepEqual(loadCheckpoint(separate).tensors[q].data, model.host[q].data);
  assert.ok(maxAbsDiff(loadCheckpoint(merged).tensors[q].data, model.host[q].data) > 1e-4);
});

test('--dtype bf16 stores every tensor as BF16 and the model still computes nearly the same logits', async () => {
  const model = tinyModel(14);
  const run = await storeWithRun([1], (dir) => saveTinyModel(dir, model));
  const out = join(run.root, 'bf16');
  exportCheckpoint(run.dirs[1], out, { dtype: 'bf16' });
  assert.ok(readSafetensorsHeader(join(out, 'model.safetensors')).entries.every((e) => e.dtype === 'BF16'));
  assert.equal(JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')).torch_dtype, 'bfloat16');
  const loaded = loadedHostParams(out);
  const full = await logitsOf(model.cfg, model.host, TOKENS);
  const half = await logitsOf(loaded.cfg, loaded.host, TOKENS);
  const scale = Math.max(...full.map(Math.abs));
  // bf16 keeps 8 significant bits: ~0.4 % per weight.
  assert.ok(maxAbsDiff(full, half) < 0.02 * scale, `${maxAbsDiff(full, half)} vs scale ${scale}`);
  assert.ok(maxAbsDiff(full, half) > 0, 'bf16 rounding must show');
});

test('the destination is checked before anything is read or written', async () => {
  const model = tinyModel(15);
  const run = await storeWithRun([2], (dir) => saveTinyModel(dir, model));
  const refused = (out: string, pattern: RegExp, force = false) =>
    assert.throws(() => exportCheckpoint(run.dirs[2], out, { force }), (e: unknown) => e instanceof UsageError && pattern.test(e.message));
  writeFileSync(join(run.root, 'a-file'), 'x');
  refused(join(run.root, 'a-file'), /^--out: .*a-file exists and is not a folder/);
  refused(dirname(run.dirs[2]), /^--out: .* holds the checkpoint being exported/, true);
  refused(run.dirs[2], /^--out: .* holds the checkpoint being exported/, true);
  refused(join(run.root, 'no', 'such', 'parent'), /^--out: the parent folder .* does not exist/);
  assert.throws(() => exportCheckpoint(run.dirs[2], join(run.root, 'x'), { dtype: 'f16' as never }), /--dtype: expected one of f32, bf16/);
  assert.ok(existsSync(join(run.dirs[2], 'model.safetensors')));
  assert.deepEqual(readdirSync(run.root).sort(), ['.spindle', 'a-file']);
});

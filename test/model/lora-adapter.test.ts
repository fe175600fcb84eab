import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { initEngine, np, tree } from '../../src/model/engine.ts';
import { batchTensors, type BatchTensors } from '../../src/model/logprobs.ts';
import { applyLora, initLora, loraScale, loraShapes, mergeLoraHost, type LoraConfig } from '../../src/model/lora.ts';
import { ADAPTER_CONFIG_FILE, loadLoraAdapter, saveLoraAdapter } from '../../src/model/lora-io.ts';
import { ParamTrainer } from '../../src/model/param-trainer.ts';
import { toHostParams, toParams, type Params } from '../../src/model/params.ts';
import { buildTokenBatch } from '../../src/model/token-batch.ts';
import { forwardInputs, forwardLogits } from '../../src/model/transformer.ts';
import { maskedNll } from '../../src/model/train-throughput.ts';
import { maxAbsDiff, randomHostParams, tinyConfig } from './model-fixtures.ts';
import { referenceLogitsWithLora } from './model-reference.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

const dir = tempDir('spindle-lora-');
before(async () => {
  await initEngine({ threads: 1 });
});

const cfg = tinyConfig('qwen3');
const lora: LoraConfig = { r: 4, alpha: 8, dropout: 0, targetModules: ['q_proj', 'v_proj', 'o_proj', 'gate_proj', 'down_proj'] };
const samples = [
  { promptIds: [1, 2, 3], completionIds: [4, 5, 6, 7] },
  { promptIds: [9, 8], completionIds: [7, 6, 5] },
];

async function logitsOf(params: Params, tokens: number[]): Promise<Float32Array> {
  const { rope, mask } = forwardInputs(cfg, tokens.length);
  const t = np.array(new Int32Array(tokens), { dtype: np.int32 }).reshape([1, tokens.length]);
  return (await forwardLogits(cfg, params, t, rope, mask).data()) as Float32Array;
}

test('a LoRA adapter trained with AdamW learns (B leaves zero, loss falls, base frozen); merged logits equal unmerged', async () => {
  const baseHost = randomHostParams(cfg, 5, 0.2);
  const base = toParams(baseHost);
  type Inputs = { base: Params; batch: BatchTensors };
  const trainer = new ParamTrainer<Inputs>(initLora(cfg, lora, 1), (adapters, inputs) => maskedNll(cfg, applyLora(cfg, lora, inputs.base, adapters), inputs.batch), {
    lr: 1e-2,
    maxGradNorm: 1,
  });
  const losses: number[] = [];
  for (let i = 0; i < 8; i++) {
    const r = await trainer.step({ base: tree.ref(base), batch: batchTensors(cfg, buildTokenBatch(samples)) });
    losses.push(r.loss);
    assert.ok(Number.isFinite(r.gradNorm) && r.gradNorm > 0);
  }
  assert.ok(losses[7] < losses[0] - 0.05, `loss ${losses[0]} -> ${losses[7]}`);
  const adapters = await toHostParams(trainer.params);
  for (const [name, t] of Object.entries(adapters)) {
    if (name.endsWith('lora_B.weight')) assert.ok(t.data.some((x) => x !== 0), `${name} is still zero`);
  }
  // The base weights were read, never trained.
  const baseAfter = await toHostParams(base);
  for (const [name, t] of Object.entries(baseHost)) assert.deepEqual(baseAfter[name].data, t.data, name);

  const tokens = [1, 2, 3, 4, 5, 6];
  const unmergedRef = referenceLogitsWithLora(cfg, baseHost, tokens, { adapters, scale: loraScale(lora) }).flatMap((r) => Array.from(r));
  const applied = await logitsOf(applyLora(cfg, lora, tree.ref(base), tree.ref(trainer.params)), tokens);
  const merged = await logitsOf(toParams(mergeLoraHost(cfg, lora, baseHost, adapters)), tokens);
  const plainBase = await logitsOf(tree.ref(base), tokens);
  assert.ok(maxAbsDiff(merged, unmergedRef) < 1e-5, `merged vs unmerged ${maxAbsDiff(merged, unmergedRef)}`);
  assert.ok(maxAbsDiff(applied, unmergedRef) < 1e-5, `engine vs unmerged ${maxAbsDiff(applied, unmergedRef)}`);
  assert.ok(maxAbsDiff(plainBase, unmergedRef) > 1e-3, 'the adapter must change the logits');
  trainer.dispose();
  tree.dispose(base);
});

test('adapters save as PEFT writes them and load back; bad folders are named', async () => {
  const host = await toHostParams(initLora(cfg, lora, 2));
  // Give B values so the round trip is not all zeros.
  for (const [name, t] of Object.entries(host)) if (name.endsWith('lora_B.weight')) t.data.forEach((_, i) => (t.data[i] = i * 0.01));
  const out = join(dir, 'adapter');
  saveLoraAdapter(out, cfg, lora, host, { baseModelNameOrPath: 'Qwen/Qwen3-0.6B' });
  const json = JSON.parse(readFileSync(join(out, ADAPTER_CONFIG_FILE), 'utf8'));
  assert.equal(json.peft_type, 'LORA');
  assert.equal(json.r, 4);
  assert.equal(json.lora_alpha, 8);
  assert.equal(json.task_type, 'CAUSAL_LM');
  assert.deepEqual(json.target_modules, ['down_proj', 'gate_proj', 'o_proj', 'q_proj', 'v_proj']);
  const loaded = loadLoraAdapter(out, cfg);
  assert.deepEqual(loaded.lora, { ...lora, targetModules: [...lora.targetModules].sort(), useRslora: false });
  assert.equal(loaded.baseModelNameOrPath, 'Qwen/Qwen3-0.6B');
  assert.deepEqual(Object.keys(loaded.adapters).sort(), Object.keys(loraShapes(cfg, lora)).sort());
  const name = 'base_model.model.model.layers.1.self_attn.q_proj.lora_B.weight';
  assert.deepEqual(loaded.adapters[name].shape, [cfg.numHeads * cfg.headDim, 4]);
  assert.deepEqual(loaded.adapters[name].data, host[name].data);

  const broken = (patch: Record<string, unknown>): void => writeFileSync(join(out, ADAPTER_CONFIG_FILE), JSON.stringify({ ...json, ...patch }));
  const fails = (re: RegExp): void => assert.throws(() => loadLoraAdapter(out, cfg), (e: unknown) => e instanceof UsageError && re.test(e.message), String(re));
  broken({ use_dora: true });
  fails(/use_dora: DoRA is not supported/);
  broken({ peft_type: 'IA3' });
  fails(/peft_type/);
  broken({ target_modules: ['q_proj', 'lm_head'] });
  fails(/target_modules/);
  broken({ r: 0 });
  fails(/\br\b/);
  broken({ modules_to_save: ['lm_head'] });
  fails(/modules_to_save is not supported/);
  broken({ target_modules: ['q_proj'] }); // the file holds more tensors than q_proj's
  fails(/unexpected tensor/);
  broken({ r: 2 });
  fails(/lora_A.weight" has shape \[4,24\], expected \[2,24\]/);
});

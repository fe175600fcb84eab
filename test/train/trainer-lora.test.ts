/**
 * RL with LoRA (train-config.ts `lora`) on a tiny run (threads 1): the optimiser trains adapters over
 * the frozen warm start, the checkpoints hold the merged weights with the adapters beside them, and a
 * run resumed from a checkpoint logs and ends where the uninterrupted run did.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initEngine } from '../../src/model/engine.ts';
import { loraShapes, mergeLoraHost } from '../../src/model/lora.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { LORA_ADAPTERS_FILE, loadModelFolder, loadTrainCheckpoint } from '../../src/train/checkpoint-io.ts';
import { parseTrainConfig, type TrainSettings } from '../../src/train/train-config.ts';
import { trainRun, WARM_START_PATH } from '../../src/train/trainer.ts';
import { parseTrainerState } from '../../src/train/trainer-state.ts';
import { learnedWarmStart, metricsAt, newTrainRun, pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

const settings: TrainSettings = parseTrainConfig(
  tinyTrainConfig({
    steps: 2,
    checkpointEvery: 1,
    weightAverage: { from: null },
    warmStart: learnedWarmStart,
    optimizer: { lr: 1e-2, warmupSteps: 0 },
    loss: { klBeta: 0.5 },
    lora: { r: 2, alpha: 4, targetModules: ['q_proj', 'v_proj', 'down_proj'] },
  }),
);
const lora = { ...settings.lora!, dropout: 0 };

let dir: string;
let store: Store;
let runA: string;

before(async () => {
  await initEngine({ threads: 1 });
  dir = tempDir('spindle-lora-');
  store = await openStore(join(dir, 'spindle.db'));
  runA = await newTrainRun(store);
  await (await trainRun({ spec: pickSpec, options: {}, settings, store, runId: runA, resume: null })).policy.close();
});

after(async () => {
  await store?.close();
});

test('only the adapters train: the checkpoint is the frozen warm start with them merged', async () => {
  const runDir = store.runDir(runA);
  const warm = loadModelFolder(join(runDir, WARM_START_PATH)).params;
  const checkpoint = loadTrainCheckpoint(join(runDir, 'checkpoints/step-000002'), parseTrainerState);
  const adapters = checkpoint.loraAdapters!;
  assert.ok(adapters, `the checkpoint keeps ${LORA_ADAPTERS_FILE}`);
  const shapes = loraShapes(checkpoint.assets.cfg, lora);
  assert.deepEqual(Object.keys(adapters).sort(), Object.keys(shapes).sort());
  for (const [name, shape] of Object.entries(shapes)) assert.deepEqual(adapters[name].shape, shape, name);
  // B starts at 0: a B that is not all zeros was trained.
  assert.ok(Object.keys(adapters).some((name) => name.includes('lora_B') && adapters[name].data.some((v) => v !== 0)), 'B moved from 0');
  // The optimiser's moments are the adapters'.
  assert.deepEqual(Object.keys(checkpoint.optimizer!.m).sort(), Object.keys(shapes).sort());

  const merged = mergeLoraHost(checkpoint.assets.cfg, lora, warm, adapters);
  let adapted = 0;
  for (const name of Object.keys(warm)) {
    const isTarget = /(q_proj|v_proj|down_proj)\.weight$/.test(name);
    if (!isTarget) {
      assert.deepEqual(checkpoint.params[name].data, warm[name].data, `${name} stays frozen`);
      continue;
    }
    adapted++;
    const got = checkpoint.params[name].data;
    const want = merged[name].data;
    assert.ok(got.some((v, i) => v !== warm[name].data[i]), `${name} moved`);
    for (let i = 0; i < got.length; i++) assert.ok(Math.abs(got[i] - want[i]) < 1e-5, `${name}[${i}]: ${got[i]} vs ${want[i]}`);
  }
  assert.equal(adapted, 3, 'one layer, three target projections');
  // The KL is taken to the frozen warm start.
  const metrics = await store.getMetrics(runA);
  assert.equal(metricsAt(metrics, 1)['kl/beta'], 0.5);
  assert.ok(metricsAt(metrics, 2)['train/updates'] > 0 && metricsAt(metrics, 2)['kl/reference'] > 0, 'step 2 measured a KL to the warm start');
});

test('a LoRA run resumed from step 1 logs the same step 2 and ends with the same weights and adapters', async () => {
  const other = await openStore(join(dir, 'resumed.db'));
  try {
    const checkpoint = loadTrainCheckpoint(join(store.runDir(runA), 'checkpoints/step-000001'), parseTrainerState);
    const runB = await newTrainRun(other);
    // The base comes from the run's own warm-start folder: give the new run a copy.
    cpSync(join(store.runDir(runA), WARM_START_PATH), join(other.runDir(runB), WARM_START_PATH), { recursive: true });
    await assert.rejects(
      trainRun({ spec: pickSpec, options: {}, settings, store: other, runId: runB, resume: { ...checkpoint, loraAdapters: null } }),
      /the checkpoint of step 1 has no rl-lora-adapters\.safetensors/,
    );
    await (await trainRun({ spec: pickSpec, options: {}, settings, store: other, runId: runB, resume: checkpoint })).policy.close();
    const a = metricsAt(await store.getMetrics(runA), 2);
    assert.ok(a['train/updates'] > 0);
    assert.deepEqual(metricsAt(await other.getMetrics(runB), 2), a);
    const endA = loadTrainCheckpoint(join(store.runDir(runA), 'checkpoints/step-000002'), parseTrainerState);
    const endB = loadTrainCheckpoint(join(other.runDir(runB), 'checkpoints/step-000002'), parseTrainerState);
    for (const name of Object.keys(endA.params)) assert.deepEqual(endB.params[name].data, endA.params[name].data, name);
    for (const name of Object.keys(endA.loraAdapters!)) assert.deepEqual(endB.loraAdapters![name].data, endA.loraAdapters![name].data, name);
    assert.ok(existsSync(join(other.runDir(runB), 'checkpoints/step-000002', LORA_ADAPTERS_FILE)));
  } finally {
    await other.close();
  }
});

test('a bad lora config is refused naming the field', () => {
  assert.throws(() => parseTrainConfig({ lora: { r: 0, alpha: 4 } }), /train\.lora\.r/);
  assert.throws(() => parseTrainConfig({ lora: { r: 2, alpha: 4, targetModules: ['nope'] } }), /train\.lora\.targetModules/);
  assert.throws(() => parseTrainConfig({ lora: { r: 2 } }), /train\.lora\.alpha/);
});

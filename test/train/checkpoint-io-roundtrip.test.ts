/**
 * Training checkpoints: a model folder `model:DIR` loads, plus the optimizer's moments and the
 * trainer state, written atomically; everything reads back exactly, and broken files are refused
 * with a message naming them.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initEngine } from '../../src/model/engine.ts';
import { loadEmbeddedPolicy } from '../../src/policy/embedded-load.ts';
import type { AdamWState } from '../../src/model/adamw.ts';
import { checkpointPath, loadModelFolder, loadRlWeights, loadTrainCheckpoint, saveTrainCheckpoint, TRAINER_STATE_FILE } from '../../src/train/checkpoint-io.ts';
import { createDefaultModel, paddedVocab } from '../../src/train/default-model.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { parseTrainerState, TRAINER_STATE_FORMAT, type TrainerState } from '../../src/train/trainer-state.ts';
import { pickSpec, tinyTrainConfig } from './trainer-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

before(async () => {
  await initEngine({ threads: 1 });
});

const settings = parseTrainConfig(tinyTrainConfig());

function state(step: number): TrainerState {
  return {
    format: TRAINER_STATE_FORMAT,
    runId: 'run_test',
    env: 'pick',
    envOptions: {},
    step,
    policyVersion: step,
    rng: { seed: 0, nextStep: step + 1 },
    config: settings,
    maxTurns: 1,
    maxTokens: 30,
    prefixLength: 40,
    rowLength: 96,
    episodes: 12,
    actionValues: null,
    wallSeconds: 3.5,
    warmStart: null,
    weightAverage: null,
    handOver: null,
    reference: null,
    metrics: { '1': { 'reward/mean': 0.25 } },
  };
}

test('the default model: a tokenizer from the env, the default architecture sized to it, seeded weights', async () => {
  const a = await createDefaultModel({ spec: pickSpec, options: {}, seed: 3, corpusEpisodes: 20, shape: settings.model });
  const b = await createDefaultModel({ spec: pickSpec, options: {}, seed: 3, corpusEpisodes: 20, shape: settings.model });
  assert.equal(a.assets.cfg.vocabSize, paddedVocab(a.assets.tokenizer.vocabSize));
  assert.equal(a.assets.cfg.vocabSize % 32, 0);
  assert.equal(a.assets.cfg.hiddenSize, 32);
  assert.deepEqual(a.assets.stopTokenIds, [a.assets.tokenizer.tokenToId('<|im_end|>')]);
  assert.deepEqual(b.params['model.norm.weight'].data, a.params['model.norm.weight'].data);
  assert.deepEqual(b.params['model.embed_tokens.weight'].data, a.params['model.embed_tokens.weight'].data);
  // The env's own text compresses well under its tokenizer.
  assert.ok(a.corpus.chars / a.corpus.tokens > 2, `${a.corpus.chars / a.corpus.tokens} chars per token`);
});

test('a training checkpoint round-trips exactly and its folder loads as model:DIR', async () => {
  const { assets, params } = await createDefaultModel({ spec: pickSpec, options: {}, seed: 1, corpusEpisodes: 20, shape: settings.model });
  const m = Object.fromEntries(Object.entries(params).map(([k, t]) => [k, { shape: t.shape, data: t.data.map((x) => x * 0.5) }]));
  const v = Object.fromEntries(Object.entries(params).map(([k, t]) => [k, { shape: t.shape, data: t.data.map((x) => x * x) }]));
  const optimizer: AdamWState = { step: 7, config: settings.optimizer, m, v };
  const runDir = tempDir('spindle-ckpt-');
  const path = saveTrainCheckpoint(runDir, 7, { assets, params, optimizer, state: state(7) });
  assert.equal(path, checkpointPath(7));
  assert.equal(path, 'checkpoints/step-000007');
  assert.ok(!existsSync(join(runDir, `${path}.tmp`)), 'the temporary folder is renamed away');
  const back = loadTrainCheckpoint(join(runDir, path), parseTrainerState);
  assert.deepEqual(back.state, state(7));
  assert.equal(back.optimizer?.step, 7);
  assert.deepEqual(back.optimizer?.config, settings.optimizer);
  for (const name of Object.keys(params)) {
    assert.deepEqual(back.params[name].data, params[name].data, name);
    assert.deepEqual(back.optimizer?.m[name].data, m[name].data, `m ${name}`);
    assert.deepEqual(back.optimizer?.v[name].data, v[name].data, `v ${name}`);
  }
  assert.equal(back.assets.cfg.vocabSize, assets.cfg.vocabSize);
  const policy = await loadEmbeddedPolicy(join(runDir, path), { threads: 1 });
  await policy.close();
  assert.equal(back.rlParams, null, 'no rl-weights file without a weight average');
  // While the run averages its weights, the model is the average and RL's own weights sit beside it.
  const rlParams = Object.fromEntries(Object.entries(params).map(([k, t]) => [k, { shape: t.shape, data: t.data.map((x) => x + 1) }]));
  const averaging = { ...state(7), weightAverage: { firstStep: 5, count: 3 } };
  saveTrainCheckpoint(runDir, 8, { assets, params, rlParams, optimizer, state: averaging });
  const withAverage = loadTrainCheckpoint(join(runDir, checkpointPath(8)), parseTrainerState);
  assert.deepEqual(withAverage.state.weightAverage, { firstStep: 5, count: 3 });
  for (const name of Object.keys(params)) {
    assert.deepEqual(withAverage.params[name].data, params[name].data, name);
    assert.deepEqual(withAverage.rlParams?.[name].data, rlParams[name].data, `rl ${name}`);
  }
  const wrongShape = { ...rlParams, 'model.norm.weight': { shape: [1], data: new Float32Array(1) } };
  saveTrainCheckpoint(runDir, 9, { assets, params, rlParams: wrongShape, optimizer, state: averaging });
  assert.throws(() => loadTrainCheckpoint(join(runDir, checkpointPath(9)), parseTrainerState), /rl-weights\.safetensors: tensor "model\.norm\.weight" has shape \[1\]/);
  // After a reference reset the KL's reference sits beside the model too, checked the same way.
  assert.equal(withAverage.referenceParams, null, 'no reference file without a reset');
  const referenceParams = Object.fromEntries(Object.entries(params).map(([k, t]) => [k, { shape: t.shape, data: t.data.map((x) => x - 2) }]));
  const reset = { ...averaging, reference: { step: 6 } };
  saveTrainCheckpoint(runDir, 10, { assets, params, rlParams, referenceParams, optimizer, state: reset });
  const withReference = loadTrainCheckpoint(join(runDir, checkpointPath(10)), parseTrainerState);
  assert.deepEqual(withReference.state.reference, { step: 6 });
  for (const name of Object.keys(params)) assert.deepEqual(withReference.referenceParams?.[name].data, referenceParams[name].data, `reference ${name}`);
  saveTrainCheckpoint(runDir, 11, { assets, params, referenceParams: wrongShape, optimizer, state: reset });
  assert.throws(() => loadTrainCheckpoint(join(runDir, checkpointPath(11)), parseTrainerState), /reference-weights\.safetensors: tensor "model\.norm\.weight" has shape \[1\]/);
  // At a last step that handed over a chosen step, the average sits beside the model and RL's own weights.
  const averageParams = Object.fromEntries(Object.entries(params).map(([k, t]) => [k, { shape: t.shape, data: t.data.map((x) => x * 3) }]));
  const handOver = {
    firstSeed: 400_000_000,
    episodes: 4,
    candidates: [
      { weights: 'average' as const, meanReturn: 0.5, ci95: [0, 1] as [number, number], failed: 0 },
      { weights: 6, meanReturn: 0.75, ci95: [0.25, 1] as [number, number], failed: 1 },
    ],
    chosen: 6,
  };
  saveTrainCheckpoint(runDir, 12, { assets, params, rlParams, averageParams, optimizer, state: { ...averaging, handOver } });
  const chosen = loadTrainCheckpoint(join(runDir, checkpointPath(12)), parseTrainerState);
  assert.deepEqual(chosen.state.handOver, handOver);
  for (const name of Object.keys(params)) assert.deepEqual(chosen.averageParams?.[name].data, averageParams[name].data, `average ${name}`);
  assert.equal(withAverage.averageParams, null, 'no average file where the model is the average');
  // RL's own weights: the rl-weights file where there is one, else the model's.
  assert.deepEqual(loadRlWeights(join(runDir, checkpointPath(12)), assets.cfg)['model.norm.weight'].data, rlParams['model.norm.weight'].data);
  assert.deepEqual(loadRlWeights(join(runDir, path), assets.cfg)['model.norm.weight'].data, params['model.norm.weight'].data);
  writeFileSync(join(runDir, checkpointPath(12), TRAINER_STATE_FILE), JSON.stringify({ ...averaging, handOver: { ...handOver, chosen: 0 } }));
  assert.throws(() => loadTrainCheckpoint(join(runDir, checkpointPath(12)), parseTrainerState), /trainer-state\.json: .*handOver\.chosen/);
  // A checkpoint with no optimizer (the random init) reads back with null moments.
  const init = saveTrainCheckpoint(runDir, 0, { assets, params, optimizer: null, state: state(0) });
  assert.equal(loadTrainCheckpoint(join(runDir, init), parseTrainerState).optimizer, null);
  // Saving a step again replaces it.
  saveTrainCheckpoint(runDir, 7, { assets, params, optimizer, state: { ...state(7), episodes: 99 } });
  assert.equal(loadTrainCheckpoint(join(runDir, path), parseTrainerState).state.episodes, 99);
  assert.ok(loadModelFolder(join(runDir, path)).params['model.norm.weight']);
});

test('a folder without trainer state, or with a bad one, is refused naming the file and field', async () => {
  const { assets, params } = await createDefaultModel({ spec: pickSpec, options: {}, seed: 1, corpusEpisodes: 20, shape: settings.model });
  const runDir = tempDir('spindle-ckpt-');
  const path = join(runDir, saveTrainCheckpoint(runDir, 2, { assets, params, optimizer: null, state: state(2) }));
  writeFileSync(join(path, TRAINER_STATE_FILE), '{"format": "spindle-trainer-state/1", "step": -1}');
  assert.throws(() => loadTrainCheckpoint(path, parseTrainerState), /trainer-state\.json: .*step/);
  writeFileSync(join(path, TRAINER_STATE_FILE), 'not json');
  assert.throws(() => loadTrainCheckpoint(path, parseTrainerState), /trainer-state\.json: not valid JSON/);
  assert.throws(() => loadTrainCheckpoint(runDir, parseTrainerState), /no trainer-state\.json/);
});

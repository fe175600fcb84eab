import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { planShards, readModelWeights, writeModelWeights } from '../../src/model/safetensors-sharded.ts';
import { readSafetensors, type TensorMap } from '../../src/model/safetensors.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

function tensors(): TensorMap {
  const make = (n: number, seed: number) => new Float32Array(n).map((_, i) => Math.sin(seed + i));
  return {
    'model.embed_tokens.weight': { dtype: 'F32', shape: [10, 4], data: make(40, 1) }, // 160 bytes
    'model.layers.0.mlp.up_proj.weight': { dtype: 'F32', shape: [8, 4], data: make(32, 2) }, // 128
    'model.layers.0.input_layernorm.weight': { dtype: 'F32', shape: [4], data: make(4, 3) }, // 16
    'model.norm.weight': { dtype: 'F32', shape: [4], data: make(4, 4) }, // 16
    'lm_head.weight': { dtype: 'F32', shape: [10, 4], data: make(40, 5) }, // 160
  };
}

test('planShards fills shards in order and gives an oversized tensor its own shard', () => {
  assert.deepEqual(planShards(tensors(), 300), [
    ['model.embed_tokens.weight', 'model.layers.0.mlp.up_proj.weight'],
    ['model.layers.0.input_layernorm.weight', 'model.norm.weight', 'lm_head.weight'],
  ]);
  assert.deepEqual(planShards(tensors(), 150), [
    ['model.embed_tokens.weight'],
    ['model.layers.0.mlp.up_proj.weight', 'model.layers.0.input_layernorm.weight'],
    ['lm_head.weight'], // as huggingface_hub does: an oversized tensor is emitted before the open shard
    ['model.norm.weight'],
  ]);
  assert.equal(planShards(tensors(), 300, { dtype: 'BF16' }).length, 1, 'BF16 halves the bytes');
});

test('sharded save writes HF-named shards and an index, and loads back identically', () => {
  const dir = tempDir('spindle-shard-');
  const files = writeModelWeights(dir, tensors(), { maxShardBytes: 300 });
  assert.deepEqual(files, ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 'model.safetensors.index.json']);
  const index = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8'));
  assert.equal(index.metadata.total_size, 480);
  assert.deepEqual(Object.keys(index.weight_map), Object.keys(tensors()).sort(), 'weight_map sorted by name');
  assert.equal(index.weight_map['lm_head.weight'], 'model-00002-of-00002.safetensors');
  assert.deepEqual(Object.keys(readSafetensors(join(dir, files[0])).tensors).sort(), [
    'model.embed_tokens.weight',
    'model.layers.0.mlp.up_proj.weight',
  ]);
  const back = readModelWeights(dir);
  for (const [name, t] of Object.entries(tensors())) assert.deepEqual(back[name].data, t.data, name);

  // Saving again unsharded removes the old shards and index.
  assert.deepEqual(writeModelWeights(dir, tensors()), ['model.safetensors']);
  assert.deepEqual(readdirSync(dir).sort(), ['model.safetensors']);
  assert.deepEqual(readModelWeights(dir)['model.norm.weight'].data, tensors()['model.norm.weight'].data);
});

test('index errors name the tensor and the file', () => {
  const dir = tempDir('spindle-shard-');
  writeModelWeights(dir, tensors(), { maxShardBytes: 300 });
  const indexPath = join(dir, 'model.safetensors.index.json');
  const index = JSON.parse(readFileSync(indexPath, 'utf8'));

  index.weight_map['model.norm.weight'] = 'model-00001-of-00002.safetensors';
  writeFileSync(indexPath, JSON.stringify(index));
  assert.throws(
    () => readModelWeights(dir),
    /model-00001-of-00002\.safetensors: tensor "model\.norm\.weight" is listed in model\.safetensors\.index\.json but not in this shard/,
  );

  index.weight_map['model.norm.weight'] = '../elsewhere.safetensors';
  writeFileSync(indexPath, JSON.stringify(index));
  assert.throws(() => readModelWeights(dir), /weight_map\["model\.norm\.weight"\] must be a file name in the same folder/);

  index.weight_map['model.norm.weight'] = 'model-00002-of-00002.safetensors';
  writeFileSync(indexPath, JSON.stringify(index));
  rmSync(join(dir, 'model-00002-of-00002.safetensors'));
  assert.throws(() => readModelWeights(dir), /shard model-00002-of-00002\.safetensors \(holding "[^"]+"\) is missing/);

  writeFileSync(indexPath, JSON.stringify({ metadata: {} }));
  assert.throws(() => readModelWeights(dir), /weight_map must be an object/);
  writeFileSync(indexPath, '{not json');
  assert.throws(() => readModelWeights(dir), /cannot read the shard index/);

  const empty = tempDir('spindle-shard-');
  assert.throws(() => readModelWeights(empty), /no model\.safetensors or model\.safetensors\.index\.json/);
  assert.ok(!existsSync(join(empty, 'model.safetensors')));
});

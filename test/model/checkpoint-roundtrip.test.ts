import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadCheckpoint, saveCheckpoint } from '../../src/model/checkpoint.ts';
import { f32ToBf16Bits } from '../../src/model/safetensors-dtypes.ts';
import { tinyCheckpoint } from './checkpoint-fixtures.ts';
import { QWEN3_TOKENIZER_DIR } from './tokenizer-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

const fresh = () => tempDir('spindle-ckpt-');

test('a tiny checkpoint written then loaded gives the same tensors, tokenizer and template', () => {
  const input = tinyCheckpoint();
  const dir = fresh();
  const files = saveCheckpoint(dir, input);
  assert.deepEqual(files, ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json']);
  assert.deepEqual(readdirSync(dir).sort(), [...files].sort());
  const ckpt = loadCheckpoint(dir);
  assert.deepEqual(Object.keys(ckpt.tensors).sort(), Object.keys(input.tensors).sort());
  for (const [name, t] of Object.entries(input.tensors)) {
    assert.deepEqual(ckpt.tensors[name].shape, t.shape, name);
    assert.deepEqual(ckpt.tensors[name].data, t.data, name);
    assert.equal(ckpt.tensors[name].dtype, 'F32');
  }
  assert.deepEqual(ckpt.unexpectedTensors, []);
  assert.equal(ckpt.configJson.torch_dtype, 'float32');
  assert.equal(ckpt.configJson.hidden_size, 8);
  const text = 'Your hand: 12.<|im_end|>';
  assert.equal(ckpt.tokenizer.decode(ckpt.tokenizer.encode(text)), text);
  const eos = ckpt.tokenizer.eosTokenId!;
  assert.deepEqual(ckpt.stopTokenIds, [eos, eos - 2]);
  assert.deepEqual(ckpt.generationConfig?.eosTokenIds, [eos, eos - 2]);
  assert.equal(ckpt.generationConfig?.topK, 20);
  assert.equal(
    ckpt.chatTemplate.render([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true }),
    '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
  );
  const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
  assert.equal(config.chat_template, input.tokenizerConfig.chat_template);
});

test('BF16 save rounds every weight to nearest even; sharded save loads back the same', () => {
  const input = tinyCheckpoint();
  const dir = fresh();
  saveCheckpoint(dir, input, { dtype: 'BF16' });
  const ckpt = loadCheckpoint(dir);
  assert.equal(ckpt.configJson.torch_dtype, 'bfloat16');
  const name = 'model.layers.1.mlp.down_proj.weight';
  assert.equal(ckpt.tensors[name].dtype, 'BF16');
  const expected = Array.from(input.tensors[name].data, (v) => {
    const bits = new Uint32Array([f32ToBf16Bits(v) << 16]);
    return new Float32Array(bits.buffer)[0];
  });
  assert.deepEqual(Array.from(ckpt.tensors[name].data), expected);

  const sharded = fresh();
  const files = saveCheckpoint(sharded, input, { maxShardBytes: 4096 });
  const shards = files.filter((f) => /^model-\d{5}-of-\d{5}\.safetensors$/.test(f));
  assert.ok(shards.length >= 2, `${shards.length} shards`);
  assert.ok(files.includes('model.safetensors.index.json'));
  const back = loadCheckpoint(sharded);
  for (const [n, t] of Object.entries(input.tensors)) assert.deepEqual(back.tensors[n].data, t.data, n);
});

test('a checkpoint without generation_config.json loads with the tokenizer eos only', () => {
  const input = { ...tinyCheckpoint(), generationConfig: null };
  const dir = fresh();
  saveCheckpoint(dir, tinyCheckpoint());
  saveCheckpoint(dir, input); // saving again over an older save removes its generation config
  const ckpt = loadCheckpoint(dir);
  assert.equal(ckpt.generationConfig, null);
  assert.deepEqual(ckpt.stopTokenIds, [ckpt.tokenizer.eosTokenId]);
});

test('untied embeddings need lm_head.weight, extra tensors are listed', () => {
  const input = tinyCheckpoint({ tie_word_embeddings: false });
  assert.ok(input.tensors['lm_head.weight']);
  const dir = fresh();
  saveCheckpoint(dir, {
    ...input,
    tensors: { ...input.tensors, 'model.rotary_emb.inv_freq': { dtype: 'F32', shape: [2], data: new Float32Array([1, 0.01]) } },
  });
  assert.deepEqual(loadCheckpoint(dir).unexpectedTensors, ['model.rotary_emb.inv_freq']);
});

test('a checkpoint with the real Qwen3 tokenizer files loads through the same code path', () => {
  const qwenDir = QWEN3_TOKENIZER_DIR;
  const tokenizerJson = JSON.parse(readFileSync(join(qwenDir, 'tokenizer.json'), 'utf8'));
  const tokenizerConfig = JSON.parse(readFileSync(join(qwenDir, 'tokenizer_config.json'), 'utf8'));
  const input = tinyCheckpoint({ vocab_size: 151936, hidden_size: 4, head_dim: 2, intermediate_size: 4, num_hidden_layers: 1 });
  const dir = fresh();
  saveCheckpoint(dir, {
    ...input,
    tokenizerJson,
    tokenizerConfig,
    generationConfig: { bos_token_id: 151643, eos_token_id: [151645, 151643], pad_token_id: 151643, temperature: 0.6, top_k: 20, top_p: 0.95 },
  }, { dtype: 'BF16' });
  const ckpt = loadCheckpoint(dir);
  assert.deepEqual(ckpt.tensors['model.embed_tokens.weight'].shape, [151936, 4]);
  assert.deepEqual(ckpt.stopTokenIds, [151645, 151643]);
  assert.equal(ckpt.generationConfig?.temperature, 0.6);
  const prompt = ckpt.chatTemplate.render([{ role: 'user', content: 'Hello world' }], { addGenerationPrompt: true, extra: { enable_thinking: false } });
  assert.deepEqual(ckpt.tokenizer.encode(prompt), [151644, 872, 198, 9707, 1879, 151645, 198, 151644, 77091, 198, 151667, 271, 151668, 271]);
});

import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { UsageError } from '../../src/core/errors.ts';
import { loadCheckpoint, saveCheckpoint } from '../../src/model/checkpoint.ts';
import { writeSafetensors } from '../../src/model/safetensors.ts';
import { tinyCheckpoint } from './checkpoint-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

function saved(): string {
  const dir = tempDir('spindle-ckpt-');
  saveCheckpoint(dir, tinyCheckpoint());
  return dir;
}

function editJson(path: string, edit: (value: Record<string, unknown>) => void): void {
  const value = JSON.parse(readFileSync(path, 'utf8'));
  edit(value);
  writeFileSync(path, JSON.stringify(value));
}

test('missing files are named', () => {
  assert.throws(() => loadCheckpoint(join(tmpdir(), 'spindle-no-such-checkpoint')), /checkpoint folder not found/);
  for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) {
    const dir = saved();
    rmSync(join(dir, file));
    assert.throws(() => loadCheckpoint(dir), (e: Error) => e instanceof UsageError && e.message === `${join(dir, file)}: missing`, file);
  }
  const dir = saved();
  rmSync(join(dir, 'model.safetensors'));
  assert.throws(() => loadCheckpoint(dir), /missing model\.safetensors \(or model\.safetensors\.index\.json with its shards\)/);
});

test('a missing tensor or a wrong shape names the tensor', () => {
  const input = tinyCheckpoint();
  const dir = saved();
  const { ['model.layers.1.self_attn.k_norm.weight']: _dropped, ...rest } = input.tensors;
  writeSafetensors(join(dir, 'model.safetensors'), rest);
  assert.throws(() => loadCheckpoint(dir), /tensor "model\.layers\.1\.self_attn\.k_norm\.weight" \[4\] required by config\.json is missing/);

  const wrong = { ...input.tensors, 'model.layers.0.mlp.up_proj.weight': { dtype: 'F32' as const, shape: [8, 16], data: new Float32Array(128) } };
  writeSafetensors(join(dir, 'model.safetensors'), wrong);
  assert.throws(() => loadCheckpoint(dir), /tensor "model\.layers\.0\.mlp\.up_proj\.weight" has shape \[8,16\], config\.json implies \[16,8\]/);
  assert.throws(
    () => saveCheckpoint(tempDir('spindle-ckpt-'), { ...input, tensors: wrong }),
    /up_proj\.weight" has shape \[8,16\]/,
    'save validates too',
  );
});

test('bad config, tokenizer, template and generation config are reported by field', () => {
  let dir = saved();
  editJson(join(dir, 'config.json'), (c) => (c.model_type = 'gpt2'));
  assert.throws(() => loadCheckpoint(dir), /config\.json: model_type "gpt2" is not supported/);

  dir = saved();
  editJson(join(dir, 'config.json'), (c) => (c.hidden_size = 8.5));
  assert.throws(() => loadCheckpoint(dir), /config\.json: hidden_size/);

  dir = saved();
  editJson(join(dir, 'config.json'), (c) => (c.vocab_size = 100));
  assert.throws(() => loadCheckpoint(dir), /the tokenizer has ids up to \d+ but config\.json vocab_size is 100/);

  dir = saved();
  editJson(join(dir, 'tokenizer_config.json'), (c) => delete c.chat_template);
  assert.throws(() => loadCheckpoint(dir), /no chat template/);
  const ok = loadCheckpoint(dir, { chatTemplate: '{{ messages[0].content }}' });
  assert.equal(ok.chatTemplate.render([{ role: 'user', content: 'x' }]), 'x');

  dir = saved();
  editJson(join(dir, 'tokenizer_config.json'), (c) => (c.eos_token = '<|not-a-token|>'));
  assert.throws(() => loadCheckpoint(dir), /eos_token "<\|not-a-token\|>" is not in the vocabulary/);

  dir = saved();
  writeFileSync(join(dir, 'tokenizer.json'), '{"model": 3}');
  assert.throws(() => loadCheckpoint(dir), /tokenizer\.json has no "model" with a "type"/);

  dir = saved();
  writeFileSync(join(dir, 'config.json'), '{broken');
  assert.throws(() => loadCheckpoint(dir), /config\.json: not valid JSON/);

  dir = saved();
  editJson(join(dir, 'generation_config.json'), (c) => (c.eos_token_id = 'im_end'));
  assert.throws(() => loadCheckpoint(dir), /generation_config\.json: eos_token_id: /);

  dir = saved();
  writeFileSync(join(dir, 'chat_template.jinja'), '{% for m in messages %}[{{ m.content }}]{% endfor %}');
  assert.equal(loadCheckpoint(dir).chatTemplate.render([{ role: 'user', content: 'a' }]), '[a]', 'chat_template.jinja wins, as in transformers');
});

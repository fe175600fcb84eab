import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  parseSafetensors,
  readSafetensors,
  serializeSafetensors,
  writeSafetensors,
  type TensorMap,
} from '../../src/model/safetensors.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

/** Builds a file by hand from a header object and raw data bytes. */
function rawFile(header: Record<string, unknown>, data: Uint8Array, headerLength?: bigint): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, headerLength ?? BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

function headerOf(bytes: Uint8Array): { length: number; text: string } {
  const length = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { length, text: new TextDecoder().decode(bytes.subarray(8, 8 + length)) };
}

const sample: TensorMap = {
  'model.norm.weight': { dtype: 'F32', shape: [3], data: new Float32Array([1, 0.5, -2]) },
  'model.embed_tokens.weight': { dtype: 'BF16', shape: [2, 2], data: new Float32Array([1, -0.375, 2 ** 20, 0.0078125]) },
  'lm_head.weight': { dtype: 'F32', shape: [2, 2], data: new Float32Array([0.1, 0.2, 0.3, 0.4]) },
  'empty.weight': { dtype: 'F32', shape: [0, 4], data: new Float32Array(0) },
};

test('round trip keeps names, dtypes, shapes and exact values', () => {
  const back = parseSafetensors(serializeSafetensors(sample));
  assert.deepEqual(back.metadata, { format: 'pt' });
  assert.deepEqual(Object.keys(back.tensors).sort(), Object.keys(sample).sort());
  for (const [name, t] of Object.entries(sample)) {
    assert.equal(back.tensors[name].dtype, t.dtype, name);
    assert.deepEqual(back.tensors[name].shape, t.shape, name);
    assert.deepEqual(back.tensors[name].data, t.data, name);
  }
});

test('header is laid out as the safetensors library writes it', () => {
  const bytes = serializeSafetensors(sample);
  const { length, text } = headerOf(bytes);
  assert.equal(length % 8, 0, 'header padded to 8 bytes');
  assert.match(text, / *$/);
  const trimmed = text.trimEnd();
  assert.ok(length - trimmed.length < 8, 'padding is spaces only, fewer than 8');
  // F32 tensors first (by name), then BF16; __metadata__ first; compact JSON.
  assert.equal(
    trimmed,
    '{"__metadata__":{"format":"pt"},' +
      '"empty.weight":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]},' +
      '"lm_head.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},' +
      '"model.norm.weight":{"dtype":"F32","shape":[3],"data_offsets":[16,28]},' +
      '"model.embed_tokens.weight":{"dtype":"BF16","shape":[2,2],"data_offsets":[28,36]}}',
  );
  assert.equal(bytes.length, 8 + length + 36, 'data section is exactly the tensors');
});

test('writing as BF16 rounds to nearest even; representable values stay exact', () => {
  const tensors: TensorMap = {
    exact: { dtype: 'F32', shape: [4], data: new Float32Array([1, -2.5, 0.15625, 3 * 2 ** -10]) },
    rounded: { dtype: 'F32', shape: [3], data: new Float32Array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 0.1]) },
  };
  const back = parseSafetensors(serializeSafetensors(tensors, { dtype: 'BF16' })).tensors;
  assert.equal(back.exact.dtype, 'BF16');
  assert.deepEqual(Array.from(back.exact.data), [1, -2.5, 0.15625, 3 * 2 ** -10]);
  // 0.1 = 0x3DCCCCCD -> bf16 0x3DCD (the dropped 0xCCCD is above half) = 0.10009765625
  assert.deepEqual(Array.from(back.rounded.data), [1, 1 + 2 ** -6, 0.10009765625]);
});

test('files on disk round trip, `only` selects tensors, metadata can be omitted', () => {
  const dir = tempDir('spindle-st-');
  const path = join(dir, 'model.safetensors');
  writeSafetensors(path, sample, { metadata: { format: 'pt', note: 'spindle' } });
  const all = readSafetensors(path);
  assert.deepEqual(all.metadata, { format: 'pt', note: 'spindle' });
  assert.deepEqual(all.tensors['lm_head.weight'].data, sample['lm_head.weight'].data);
  const some = readSafetensors(path, new Set(['model.norm.weight']));
  assert.deepEqual(Object.keys(some.tensors), ['model.norm.weight']);
  assert.deepEqual(readFileSync(path), Buffer.from(serializeSafetensors(sample, { metadata: { format: 'pt', note: 'spindle' } })));
  writeSafetensors(path, sample, { metadata: null });
  assert.equal(readSafetensors(path).metadata, null);
  assert.ok(!headerOf(readFileSync(path)).text.includes('__metadata__'));
});

test('reads F16 tensors written by hand', () => {
  const data = new Uint8Array([0x00, 0x3c, 0x01, 0x00, 0x00, 0x7c, 0x00, 0xc0]);
  const file = rawFile({ h: { dtype: 'F16', shape: [2, 2], data_offsets: [0, 8] } }, data);
  const t = parseSafetensors(file, 'half.safetensors').tensors.h;
  assert.equal(t.dtype, 'F16');
  assert.deepEqual(Array.from(t.data), [1, 2 ** -24, Infinity, -2]);
});

test('corrupt files fail with errors naming the file and the tensor', () => {
  const good = serializeSafetensors(sample);
  assert.throws(() => parseSafetensors(good.subarray(0, 5), 'a.safetensors'), /a\.safetensors: file truncated: 5 bytes/);
  assert.throws(
    () => parseSafetensors(good.subarray(0, good.length - 3), 'a.safetensors'),
    /a\.safetensors: file truncated or offsets out of range: tensor "model\.embed_tokens\.weight" needs bytes \[28, 36\) of a 33-byte data section/,
  );
  const overflow = good.slice();
  new DataView(overflow.buffer).setBigUint64(0, 2n ** 62n, true);
  assert.throws(() => parseSafetensors(overflow, 'b.safetensors'), /b\.safetensors: header length \d+ exceeds the 100000000-byte limit/);
  const tooLong = good.slice();
  new DataView(tooLong.buffer).setBigUint64(0, BigInt(good.length), true);
  assert.throws(() => parseSafetensors(tooLong, 'c.safetensors'), /c\.safetensors: file truncated: header says/);

  const four = new Uint8Array(16);
  assert.throws(
    () => parseSafetensors(rawFile({ w: { dtype: 'F32', shape: [4], data_offsets: [0, 20] } }, four), 'd.safetensors'),
    /d\.safetensors: tensor "w": data_offsets \[0, 20\] hold 20 bytes but F32 \[4\] needs 16/,
  );
  assert.throws(
    () => parseSafetensors(rawFile({ w: { dtype: 'F32', shape: [4], data_offsets: [8, 24] } }, four), 'e.safetensors'),
    /e\.safetensors: file truncated or offsets out of range: tensor "w"/,
  );
  assert.throws(
    () =>
      parseSafetensors(
        rawFile(
          { a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [2], data_offsets: [4, 12] } },
          four,
        ),
        'f.safetensors',
      ),
    /f\.safetensors: tensor "b": data_offsets \[4, 12\] overlap tensor "a"/,
  );
  assert.throws(
    () => parseSafetensors(rawFile({ ids: { dtype: 'I64', shape: [2], data_offsets: [0, 16] } }, four), 'g.safetensors'),
    /g\.safetensors: tensor "ids": unsupported dtype "I64"/,
  );
  assert.throws(() => parseSafetensors(rawFile({ w: { dtype: 'F32', shape: [-1], data_offsets: [0, 0] } }, four), 'h'), /tensor "w": shape \[-1\]/);
  const notJson = rawFile({}, four);
  notJson[8] = 0x5b; // '['
  assert.throws(() => parseSafetensors(notJson, 'i.safetensors'), /i\.safetensors: header is not/);
  assert.throws(() => readSafetensors(join(tmpdir(), 'no-such-dir-spindle', 'x.safetensors')), /cannot open \(ENOENT\)/);
});

test('truncated file on disk is reported with its path', () => {
  const dir = tempDir('spindle-st-');
  const path = join(dir, 'cut.safetensors');
  const good = serializeSafetensors(sample);
  writeFileSync(path, good.subarray(0, good.length - 1));
  assert.throws(() => readSafetensors(path), (error: Error) => error.message.startsWith(`${path}: file truncated`));
});

test('writer rejects data that does not match its shape', () => {
  assert.throws(
    () => serializeSafetensors({ w: { dtype: 'F32', shape: [2, 3], data: new Float32Array(5) } }),
    /tensor "w": shape \[2,3\] needs 6 values, data has 5/,
  );
});

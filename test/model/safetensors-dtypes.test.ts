import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeFloats, encodeFloats, f32ToBf16Bits, f32ToF16Bits } from '../../src/model/safetensors-dtypes.ts';

function u16le(values: number[]): Uint8Array {
  const bytes = new Uint8Array(values.length * 2);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => view.setUint16(i * 2, v, true));
  return bytes;
}

test('F16 decode: normals, subnormals, zeros, infinities, NaN', () => {
  const cases: [number, number][] = [
    [0x3c00, 1],
    [0xc000, -2],
    [0x3555, 0.333251953125],
    [0x7bff, 65504],
    [0x0400, 2 ** -14], // smallest normal
    [0x0001, 2 ** -24], // smallest subnormal
    [0x03ff, 1023 * 2 ** -24], // largest subnormal
    [0x8001, -(2 ** -24)],
    [0x0000, 0],
    [0x7c00, Infinity],
    [0xfc00, -Infinity],
  ];
  const out = decodeFloats(u16le(cases.map((c) => c[0])), 'F16', cases.length);
  cases.forEach(([, expected], i) => assert.equal(out[i], expected, `half 0x${cases[i][0].toString(16)}`));
  const special = decodeFloats(u16le([0x7e00, 0x8000]), 'F16', 2);
  assert.ok(Number.isNaN(special[0]));
  assert.ok(Object.is(special[1], -0), 'negative zero keeps its sign');
});

test('BF16 decode is the upper half of float32', () => {
  const out = decodeFloats(u16le([0x3f80, 0xc040, 0x7f80, 0x0001, 0x3eab]), 'BF16', 5);
  assert.deepEqual(Array.from(out), [1, -3, Infinity, 2 ** -133, 0.333984375]);
});

test('BF16 encode rounds to nearest, ties to even', () => {
  assert.equal(f32ToBf16Bits(1), 0x3f80);
  assert.equal(f32ToBf16Bits(1 + 2 ** -8), 0x3f80, 'halfway between 1 and 1+2^-7 goes to the even 1');
  assert.equal(f32ToBf16Bits(1 + 3 * 2 ** -8), 0x3f82, 'halfway, odd below: rounds up to even');
  assert.equal(f32ToBf16Bits(1 + 2 ** -8 + 2 ** -20), 0x3f81, 'just above halfway rounds up');
  assert.equal(f32ToBf16Bits(1 + 2 ** -8 - 2 ** -20), 0x3f80, 'just below halfway rounds down');
  assert.equal(f32ToBf16Bits(-(1 + 3 * 2 ** -8)), 0xbf82);
  assert.equal(f32ToBf16Bits(3.4028234663852886e38), 0x7f80, 'float32 max rounds to infinity');
  assert.equal(f32ToBf16Bits(-Infinity), 0xff80);
  const nan = f32ToBf16Bits(NaN);
  assert.equal(nan & 0x7f80, 0x7f80);
  assert.notEqual(nan & 0x7f, 0, 'NaN stays NaN, never becomes infinity');
});

test('F16 encode rounds to nearest even, including subnormals and overflow', () => {
  assert.equal(f32ToF16Bits(1), 0x3c00);
  assert.equal(f32ToF16Bits(65504), 0x7bff);
  assert.equal(f32ToF16Bits(65520), 0x7c00, 'halfway past the max rounds to infinity');
  assert.equal(f32ToF16Bits(1 + 2 ** -11), 0x3c00, 'tie to even');
  assert.equal(f32ToF16Bits(1 + 3 * 2 ** -11), 0x3c02);
  assert.equal(f32ToF16Bits(2 ** -24), 0x0001);
  assert.equal(f32ToF16Bits(2 ** -25), 0x0000, 'half the smallest subnormal ties to even zero');
  assert.equal(f32ToF16Bits(1.5 * 2 ** -25), 0x0001);
  assert.equal(f32ToF16Bits(3 * 2 ** -25), 0x0002, '1.5 subnormal steps ties up to the even 2');
  assert.equal(f32ToF16Bits(1023 * 2 ** -24), 0x03ff);
  assert.equal(f32ToF16Bits(-0), 0x8000);
  // Every half value survives a decode -> encode round trip.
  const all = new Uint16Array(65536).map((_, i) => i);
  const decoded = decodeFloats(new Uint8Array(all.buffer), 'F16', 65536);
  for (let h = 0; h < 65536; h++) {
    if (Number.isNaN(decoded[h])) continue;
    assert.equal(f32ToF16Bits(decoded[h]), h, `half 0x${h.toString(16)}`);
  }
});

test('encodeFloats -> decodeFloats is exact for representable values', () => {
  const values = new Float32Array([0, -1.5, 2 ** 100, -(2 ** -130), 0.1, 123456.789]);
  assert.deepEqual(decodeFloats(encodeFloats(values, 'F32'), 'F32', values.length), values);
  const bf = new Float32Array([1, -2.5, 0.375, 2 ** 120, 1.0078125]);
  assert.deepEqual(decodeFloats(encodeFloats(bf, 'BF16'), 'BF16', bf.length), bf);
  const f16 = new Float32Array([1, -2.5, 0.375, 65504, 2 ** -24]);
  assert.deepEqual(decodeFloats(encodeFloats(f16, 'F16'), 'F16', f16.length), f16);
});

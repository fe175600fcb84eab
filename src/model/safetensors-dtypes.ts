/**
 * Float conversions between the safetensors storage dtypes and Float32Array.
 * Node 20 has no Float16Array, so half and bfloat16 are decoded and encoded bit by bit.
 */

/** The dtypes Spindle reads; all decode to Float32Array. */
export const READABLE_DTYPES = ['F32', 'F16', 'BF16'] as const;
export type FloatDtype = (typeof READABLE_DTYPES)[number];

/** The dtypes Spindle writes. */
export const WRITABLE_DTYPES = ['F32', 'BF16', 'F16'] as const;

export const DTYPE_BYTES: Record<FloatDtype, number> = { F32: 4, F16: 2, BF16: 2 };

export function isFloatDtype(value: unknown): value is FloatDtype {
  return typeof value === 'string' && (READABLE_DTYPES as readonly string[]).includes(value);
}

let f16Table: Float32Array | null = null;

/** The value of every 16-bit half pattern, built once (256 KiB). */
function halfTable(): Float32Array {
  if (f16Table) return f16Table;
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    let value: number;
    if (exponent === 0) value = mantissa * 2 ** -24; // zero and subnormals
    else if (exponent === 31) value = mantissa === 0 ? Infinity : NaN;
    else value = (1 + mantissa / 1024) * 2 ** (exponent - 15);
    table[h] = sign * value;
  }
  f16Table = table;
  return table;
}

/** Little-endian bytes of `count` elements of `dtype` -> Float32Array. `bytes` may be unaligned. */
export function decodeFloats(bytes: Uint8Array, dtype: FloatDtype, count: number): Float32Array {
  const out = new Float32Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dtype === 'F32') {
    for (let i = 0; i < count; i++) out[i] = view.getFloat32(i * 4, true);
  } else if (dtype === 'BF16') {
    const bits = new Uint32Array(out.buffer);
    for (let i = 0; i < count; i++) bits[i] = view.getUint16(i * 2, true) << 16;
  } else {
    const table = halfTable();
    for (let i = 0; i < count; i++) out[i] = table[view.getUint16(i * 2, true)];
  }
  return out;
}

const scratch = new DataView(new ArrayBuffer(4));

/** float32 bits -> bfloat16 bits, rounding to nearest with ties to even; NaN stays a quiet NaN. */
export function f32ToBf16Bits(value: number): number {
  scratch.setFloat32(0, value, true);
  const bits = scratch.getUint32(0, true);
  if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x007fffff) !== 0) return ((bits >>> 16) | 0x0040) & 0xffff;
  const rounded = bits + 0x7fff + ((bits >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

/** A number -> IEEE half bits, rounding to nearest with ties to even (overflow -> inf). */
export function f32ToF16Bits(value: number): number {
  scratch.setFloat32(0, value, true);
  const bits = scratch.getUint32(0, true);
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  // Unbiased exponent; halves cover 2^-24 (smallest subnormal) to 65504.
  const e = exponent - 127;
  if (e > 15) return sign | 0x7c00;
  if (e >= -14) {
    // Normal half: keep 10 mantissa bits, round the 13 dropped ones.
    let half = ((e + 15) << 10) | (mantissa >>> 13);
    const dropped = mantissa & 0x1fff;
    if (dropped > 0x1000 || (dropped === 0x1000 && (half & 1) === 1)) half += 1; // may carry into inf: correct
    return sign | half;
  }
  if (e < -25) return sign; // below half the smallest subnormal: rounds to zero
  // Subnormal half: value = m * 2^-24 with m < 1024; shift the full 24-bit significand.
  const significand = mantissa | 0x800000;
  const shift = -e - 14 + 13; // 14..24 (for e = -15..-25)
  let half = significand >>> shift;
  const remainder = significand & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  if (remainder > halfway || (remainder === halfway && (half & 1) === 1)) half += 1;
  return sign | half;
}

/** Float32Array -> little-endian bytes of `dtype`. */
export function encodeFloats(data: Float32Array, dtype: FloatDtype): Uint8Array {
  const bytes = new Uint8Array(data.length * DTYPE_BYTES[dtype]);
  const view = new DataView(bytes.buffer);
  if (dtype === 'F32') {
    for (let i = 0; i < data.length; i++) view.setFloat32(i * 4, data[i], true);
  } else if (dtype === 'BF16') {
    for (let i = 0; i < data.length; i++) view.setUint16(i * 2, f32ToBf16Bits(data[i]), true);
  } else {
    for (let i = 0; i < data.length; i++) view.setUint16(i * 2, f32ToF16Bits(data[i]), true);
  }
  return bytes;
}

/**
 * The safetensors format: 8-byte little-endian header length N, N bytes of JSON
 * ({name: {dtype, shape, data_offsets: [start, end]}, "__metadata__"?: {string: string}}), then the
 * data section. Offsets are relative to the data section. Works on plain typed arrays so it does
 * not depend on the tensor engine; files are read and written tensor by tensor (no 2 GiB limit).
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { basename } from 'node:path';
import { UsageError } from '../core/errors.ts';
import {
  DTYPE_BYTES,
  WRITABLE_DTYPES,
  decodeFloats,
  encodeFloats,
  isFloatDtype,
  type FloatDtype,
} from './safetensors-dtypes.ts';

export type { FloatDtype } from './safetensors-dtypes.ts';

/** One tensor: `dtype` is its storage type (on read, the file's); `data` is row-major float32. */
export interface TensorData {
  dtype: FloatDtype;
  shape: number[];
  data: Float32Array;
}

export type TensorMap = Record<string, TensorData>;

export interface SafetensorsContent {
  tensors: TensorMap;
  /** The `__metadata__` map, or null when the file has none. */
  metadata: Record<string, string> | null;
}

/** A tensor's entry in the header, validated. */
export interface HeaderEntry {
  name: string;
  dtype: FloatDtype;
  shape: number[];
  start: number;
  end: number;
}

/** The safetensors library refuses headers above this size (100 MB); so does Spindle. */
export const MAX_HEADER_BYTES = 100_000_000;

/** Random access to the bytes of a file or a buffer. */
interface ByteSource {
  size: number;
  read(offset: number, length: number): Uint8Array;
}

function fail(label: string, message: string): never {
  throw new UsageError(`${label}: ${message}`);
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((n, d) => n * d, 1);
}

function parseEntry(label: string, name: string, raw: unknown): HeaderEntry {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    fail(label, `tensor "${name}": header entry is not an object`);
  }
  const { dtype, shape, data_offsets: offsets } = raw as Record<string, unknown>;
  if (!isFloatDtype(dtype)) {
    fail(label, `tensor "${name}": unsupported dtype ${JSON.stringify(dtype)} (Spindle reads F32, F16 and BF16)`);
  }
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    fail(label, `tensor "${name}": shape ${JSON.stringify(shape)} is not a list of non-negative integers`);
  }
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) ||
    offsets[0] > offsets[1]
  ) {
    fail(label, `tensor "${name}": data_offsets ${JSON.stringify(offsets)} is not [start, end] with 0 <= start <= end`);
  }
  const [start, end] = offsets as number[];
  const needed = elementCount(shape) * DTYPE_BYTES[dtype];
  if (end - start !== needed) {
    fail(
      label,
      `tensor "${name}": data_offsets [${start}, ${end}] hold ${end - start} bytes but ${dtype} ${JSON.stringify(shape)} needs ${needed}`,
    );
  }
  return { name, dtype, shape: [...shape], start, end };
}

/** Reads and validates the header: entries sorted by offset, non-overlapping, inside the data section. */
function readHeader(
  source: ByteSource,
  label: string,
): { entries: HeaderEntry[]; metadata: Record<string, string> | null; dataStart: number } {
  if (source.size < 8) fail(label, `file truncated: ${source.size} bytes, less than the 8-byte header length`);
  const lengthBytes = source.read(0, 8);
  const headerLength = new DataView(lengthBytes.buffer, lengthBytes.byteOffset, 8).getBigUint64(0, true);
  if (headerLength > BigInt(MAX_HEADER_BYTES)) {
    fail(label, `header length ${headerLength} exceeds the ${MAX_HEADER_BYTES}-byte limit (corrupt file?)`);
  }
  const n = Number(headerLength);
  if (8 + n > source.size) fail(label, `file truncated: header says ${n} bytes but only ${source.size - 8} follow`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(source.read(8, n)));
  } catch (error) {
    fail(label, `header is not valid UTF-8 JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) fail(label, 'header is not a JSON object');

  let metadata: Record<string, string> | null = null;
  const entries: HeaderEntry[] = [];
  for (const [name, raw] of Object.entries(parsed as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !Object.values(raw).every((v) => typeof v === 'string')) {
        fail(label, '__metadata__ must map strings to strings');
      }
      metadata = { ...(raw as Record<string, string>) };
      continue;
    }
    entries.push(parseEntry(label, name, raw));
  }
  entries.sort((a, b) => a.start - b.start || a.end - b.end);
  const dataStart = 8 + n;
  const dataLength = source.size - dataStart;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (i > 0 && entry.start < entries[i - 1].end) {
      fail(label, `tensor "${entry.name}": data_offsets [${entry.start}, ${entry.end}] overlap tensor "${entries[i - 1].name}"`);
    }
    if (entry.end > dataLength) {
      fail(
        label,
        `file truncated or offsets out of range: tensor "${entry.name}" needs bytes [${entry.start}, ${entry.end}) of a ${dataLength}-byte data section`,
      );
    }
  }
  return { entries, metadata, dataStart };
}

function readContent(source: ByteSource, label: string, only?: ReadonlySet<string>): SafetensorsContent {
  const { entries, metadata, dataStart } = readHeader(source, label);
  const tensors: TensorMap = {};
  for (const entry of entries) {
    if (only && !only.has(entry.name)) continue;
    const bytes = source.read(dataStart + entry.start, entry.end - entry.start);
    tensors[entry.name] = {
      dtype: entry.dtype,
      shape: entry.shape,
      data: decodeFloats(bytes, entry.dtype, elementCount(entry.shape)),
    };
  }
  return { tensors, metadata };
}

function bufferSource(bytes: Uint8Array): ByteSource {
  return { size: bytes.byteLength, read: (offset, length) => bytes.subarray(offset, offset + length) };
}

function withFileSource<T>(path: string, use: (source: ByteSource) => T): T {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw new UsageError(`${path}: cannot open (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    const size = fstatSync(fd).size;
    return use({
      size,
      read(offset, length) {
        const out = new Uint8Array(length);
        let done = 0;
        while (done < length) {
          const got = readSync(fd, out, done, length - done, offset + done);
          if (got === 0) fail(path, `file truncated while reading bytes [${offset}, ${offset + length})`);
          done += got;
        }
        return out;
      },
    });
  } finally {
    closeSync(fd);
  }
}

/** Parses safetensors bytes held in memory; `label` names the source in errors. */
export function parseSafetensors(bytes: Uint8Array, label = 'safetensors'): SafetensorsContent {
  return readContent(bufferSource(bytes), label);
}

/** Reads a safetensors file; `only` restricts which tensors are decoded. */
export function readSafetensors(path: string, only?: ReadonlySet<string>): SafetensorsContent {
  return withFileSource(path, (source) => readContent(source, path, only));
}

/** Reads and validates only the header (names, dtypes, shapes, offsets) of a file. */
export function readSafetensorsHeader(path: string): { entries: HeaderEntry[]; metadata: Record<string, string> | null } {
  return withFileSource(path, (source) => {
    const { entries, metadata } = readHeader(source, path);
    return { entries, metadata };
  });
}

export interface WriteOptions {
  /** Storage dtype for every tensor; default: each tensor's own `dtype` (F32, BF16 or F16). */
  dtype?: FloatDtype;
  /** `__metadata__`; Hugging Face loaders expect `{ format: 'pt' }`, the default. */
  metadata?: Record<string, string> | null;
}

// Rank in the safetensors Dtype enum: it writes larger dtypes first, then by name.
const DTYPE_RANK: Record<FloatDtype, number> = { F16: 0, BF16: 1, F32: 2 };

interface PlannedTensor {
  name: string;
  dtype: FloatDtype;
  tensor: TensorData;
  start: number;
  end: number;
}

/** Validates tensors and lays them out exactly as the safetensors library does. */
function planLayout(tensors: TensorMap, options: WriteOptions, label: string): { header: Uint8Array; plan: PlannedTensor[] } {
  const items = Object.entries(tensors).map(([name, tensor]) => {
    const dtype = options.dtype ?? tensor.dtype;
    if (!(WRITABLE_DTYPES as readonly string[]).includes(dtype)) {
      fail(label, `tensor "${name}": cannot write dtype ${JSON.stringify(dtype)}`);
    }
    if (name === '__metadata__' || name.length === 0) fail(label, `invalid tensor name ${JSON.stringify(name)}`);
    if (!tensor.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      fail(label, `tensor "${name}": shape ${JSON.stringify(tensor.shape)} is not a list of non-negative integers`);
    }
    if (elementCount(tensor.shape) !== tensor.data.length) {
      fail(label, `tensor "${name}": shape ${JSON.stringify(tensor.shape)} needs ${elementCount(tensor.shape)} values, data has ${tensor.data.length}`);
    }
    return { name, dtype, tensor };
  });
  items.sort((a, b) => DTYPE_RANK[b.dtype] - DTYPE_RANK[a.dtype] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let offset = 0;
  const plan: PlannedTensor[] = items.map((item) => {
    const start = offset;
    offset += item.tensor.data.length * DTYPE_BYTES[item.dtype];
    return { ...item, start, end: offset };
  });
  const header: Record<string, unknown> = {};
  const metadata = options.metadata === undefined ? { format: 'pt' } : options.metadata;
  if (metadata) header.__metadata__ = metadata;
  for (const p of plan) header[p.name] = { dtype: p.dtype, shape: p.tensor.shape, data_offsets: [p.start, p.end] };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8; // the library pads the header with spaces to 8 bytes
  if (padded > MAX_HEADER_BYTES) fail(label, `header of ${padded} bytes exceeds the ${MAX_HEADER_BYTES}-byte limit`);
  const out = new Uint8Array(8 + padded).fill(0x20, 8);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.set(json, 8);
  return { header: out, plan };
}

/** Bytes of a safetensors file holding `tensors`. */
export function serializeSafetensors(tensors: TensorMap, options: WriteOptions = {}): Uint8Array {
  const { header, plan } = planLayout(tensors, options, 'safetensors');
  const total = header.length + (plan.length ? plan[plan.length - 1].end : 0);
  const out = new Uint8Array(total);
  out.set(header, 0);
  for (const p of plan) out.set(encodeFloats(p.tensor.data, p.dtype), header.length + p.start);
  return out;
}

/** Writes a safetensors file tensor by tensor; returns the bytes of tensor data written. */
export function writeSafetensors(path: string, tensors: TensorMap, options: WriteOptions = {}): number {
  const { header, plan } = planLayout(tensors, options, basename(path));
  const fd = openSync(path, 'w');
  try {
    writeAll(fd, header);
    for (const p of plan) writeAll(fd, encodeFloats(p.tensor.data, p.dtype));
  } finally {
    closeSync(fd);
  }
  return plan.length ? plan[plan.length - 1].end : 0;
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
}

/** Bytes a tensor takes when stored as `dtype`. */
export function storedBytes(tensor: TensorData, dtype: FloatDtype = tensor.dtype): number {
  return tensor.data.length * DTYPE_BYTES[dtype];
}

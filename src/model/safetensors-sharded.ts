/**
 * Sharded safetensors as Hugging Face writes them: `model-00001-of-0000N.safetensors` files and
 * `model.safetensors.index.json` ({"metadata": {"total_size"}, "weight_map": {tensor: file}}).
 */
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../core/errors.ts';
import { readSafetensors, readSafetensorsHeader, storedBytes, writeSafetensors, type TensorMap, type WriteOptions } from './safetensors.ts';

export const SINGLE_FILE = 'model.safetensors';
export const INDEX_FILE = 'model.safetensors.index.json';
/** transformers' `save_pretrained` default `max_shard_size` ("5GB"). */
export const DEFAULT_MAX_SHARD_BYTES = 5_000_000_000;

const SHARD_NAME = /^model-\d{5}-of-\d{5}\.safetensors$/;

export interface ShardIndex {
  metadata: { total_size: number } & Record<string, unknown>;
  weight_map: Record<string, string>;
}

/** Reads and validates an index file: every tensor maps to a plain file name in the same folder. */
export function readShardIndex(path: string): ShardIndex {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`${path}: cannot read the shard index (${(error as Error).message})`);
  }
  const index = raw as Partial<ShardIndex> | null;
  const map = index?.weight_map;
  if (typeof map !== 'object' || map === null || Array.isArray(map)) {
    throw new UsageError(`${path}: weight_map must be an object mapping tensor names to shard files`);
  }
  for (const [name, file] of Object.entries(map)) {
    if (typeof file !== 'string' || file.length === 0 || file.includes('/') || file.includes('\\') || file === '..') {
      throw new UsageError(`${path}: weight_map["${name}"] must be a file name in the same folder, got ${JSON.stringify(file)}`);
    }
  }
  const metadata = typeof index?.metadata === 'object' && index.metadata !== null ? index.metadata : { total_size: 0 };
  return { metadata: metadata as ShardIndex['metadata'], weight_map: { ...map } };
}

/** Loads every tensor the index names, checking that each is in the shard the index says. */
export function readShardedSafetensors(dir: string, indexFile = INDEX_FILE): TensorMap {
  const indexPath = join(dir, indexFile);
  const index = readShardIndex(indexPath);
  const byFile = new Map<string, Set<string>>();
  for (const [name, file] of Object.entries(index.weight_map)) {
    if (!byFile.has(file)) byFile.set(file, new Set());
    byFile.get(file)!.add(name);
  }
  const tensors: TensorMap = {};
  for (const [file, names] of byFile) {
    const path = join(dir, file);
    if (!existsSync(path)) throw new UsageError(`${indexPath}: shard ${file} (holding "${[...names][0]}") is missing`);
    const present = new Set(readSafetensorsHeader(path).entries.map((e) => e.name));
    for (const name of names) {
      if (!present.has(name)) throw new UsageError(`${path}: tensor "${name}" is listed in ${indexFile} but not in this shard`);
    }
    Object.assign(tensors, readSafetensors(path, names).tensors);
  }
  return tensors;
}

/** Splits tensors (in their given order) into shards of at most `maxBytes`, as huggingface_hub does. */
export function planShards(tensors: TensorMap, maxBytes: number, options: WriteOptions = {}): string[][] {
  const shards: string[][] = [];
  let current: string[] = [];
  let currentBytes = 0;
  for (const [name, tensor] of Object.entries(tensors)) {
    const bytes = storedBytes(tensor, options.dtype ?? tensor.dtype);
    if (bytes > maxBytes) {
      shards.push([name]); // a tensor above the limit gets a shard of its own
      continue;
    }
    if (current.length > 0 && currentBytes + bytes > maxBytes) {
      shards.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(name);
    currentBytes += bytes;
  }
  if (current.length > 0 || shards.length === 0) shards.push(current);
  return shards;
}

/** Removes weight files of an earlier save in `dir`, so a stale index or shard cannot shadow the new one. */
function removeOldWeights(dir: string): void {
  if (!existsSync(dir)) return;
  for (const file of readdirSync(dir)) {
    if (file === SINGLE_FILE || file === INDEX_FILE || SHARD_NAME.test(file)) rmSync(join(dir, file));
  }
}

export interface SaveWeightsOptions extends WriteOptions {
  maxShardBytes?: number;
}

/** Writes `model.safetensors`, or shards plus an index when the weights exceed `maxShardBytes`. Returns the files written. */
export function writeModelWeights(dir: string, tensors: TensorMap, options: SaveWeightsOptions = {}): string[] {
  const maxBytes = options.maxShardBytes ?? DEFAULT_MAX_SHARD_BYTES;
  if (!(maxBytes > 0)) throw new UsageError(`maxShardBytes must be positive, got ${maxBytes}`);
  removeOldWeights(dir);
  const shards = planShards(tensors, maxBytes, options);
  if (shards.length === 1) {
    writeSafetensors(join(dir, SINGLE_FILE), tensors, options);
    return [SINGLE_FILE];
  }
  const weightMap: Record<string, string> = {};
  const files: string[] = [];
  let totalSize = 0;
  shards.forEach((names, i) => {
    const file = `model-${String(i + 1).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.safetensors`;
    const part: TensorMap = {};
    for (const name of names) {
      part[name] = tensors[name];
      weightMap[name] = file;
    }
    totalSize += writeSafetensors(join(dir, file), part, options);
    files.push(file);
  });
  const sortedMap = Object.fromEntries(Object.entries(weightMap).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const index: ShardIndex = { metadata: { total_size: totalSize }, weight_map: sortedMap };
  writeFileSync(join(dir, INDEX_FILE), JSON.stringify(index, null, 2) + '\n');
  return [...files, INDEX_FILE];
}

/** Reads the weights of a checkpoint folder: the index when present, else `model.safetensors`. */
export function readModelWeights(dir: string): TensorMap {
  if (existsSync(join(dir, INDEX_FILE))) return readShardedSafetensors(dir);
  const single = join(dir, SINGLE_FILE);
  if (!existsSync(single)) throw new UsageError(`${dir}: no ${SINGLE_FILE} or ${INDEX_FILE}`);
  return readSafetensors(single).tensors;
}

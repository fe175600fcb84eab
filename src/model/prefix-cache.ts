/**
 * Keys and values of token prefixes that many prompts share (the system prompt and the tool
 * descriptions, a group's first observation), computed once and reused by later batches.
 * Keyed by the exact token ids; an entry may extend another one (it then shares the parent's blocks).
 * Least recently used entries are dropped past a byte budget.
 */
import type { KvBlock } from './kv-cache-attention.ts';

export type PrefixEntry = {
  tokens: number[];
  /** Per layer, the blocks (batch 1) covering `tokens`, in order. Owned by the cache. */
  layers: KvBlock[][];
};

export type PrefixCacheOptions = {
  /** Bytes of keys and values kept at most (default 256 MiB). */
  maxBytes?: number;
};

function entryBytes(entry: PrefixEntry): number {
  let bytes = 0;
  for (const b of entry.layers[0] ?? []) bytes += (b.k.size + b.v.size) * 4;
  return bytes * entry.layers.length;
}

/** True when `prefix` is a prefix of `tokens`. */
export function isPrefix(prefix: readonly number[], tokens: readonly number[]): boolean {
  if (prefix.length > tokens.length) return false;
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== tokens[i]) return false;
  return true;
}

/** Length of the longest common prefix of all `sequences` (0 for none). */
export function commonPrefixLength(sequences: readonly (readonly number[])[]): number {
  if (sequences.length === 0) return 0;
  let n = Math.min(...sequences.map((s) => s.length));
  const first = sequences[0];
  for (const s of sequences) {
    let i = 0;
    while (i < n && s[i] === first[i]) i++;
    n = i;
  }
  return n;
}

export class PrefixCache {
  private readonly entries = new Map<string, PrefixEntry & { bytes: number }>();
  private readonly maxBytes: number;
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(options: PrefixCacheOptions = {}) {
    this.maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
    if (!(this.maxBytes >= 0)) throw new Error(`PrefixCache: maxBytes must be >= 0, got ${options.maxBytes}`);
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The longest entry that is a prefix of every sequence and at most `maxLength` tokens long, with a
   * reference added to each of its blocks (the caller disposes them), or null.
   */
  lookup(sequences: readonly (readonly number[])[], maxLength = Infinity): PrefixEntry | null {
    let best: (PrefixEntry & { bytes: number }) | null = null;
    let bestKey = '';
    for (const [key, entry] of this.entries) {
      if (entry.tokens.length > maxLength || (best && entry.tokens.length <= best.tokens.length)) continue;
      if (sequences.every((s) => isPrefix(entry.tokens, s))) {
        best = entry;
        bestKey = key;
      }
    }
    if (!best) {
      this.misses++;
      return null;
    }
    this.hits++;
    // Move to the back: Map iteration order is the LRU order.
    this.entries.delete(bestKey);
    this.entries.set(bestKey, best);
    return { tokens: best.tokens, layers: best.layers.map((blocks) => blocks.map((b) => ({ k: b.k.ref, v: b.v.ref }))) };
  }

  /** Stores `entry` (taking ownership of its blocks); an existing entry for the same tokens is kept instead. */
  insert(entry: PrefixEntry): void {
    const key = entry.tokens.join(',');
    if (this.entries.has(key)) {
      disposeLayers(entry.layers);
      return;
    }
    const bytes = entryBytes(entry);
    this.entries.set(key, { ...entry, bytes });
    this.bytes += bytes;
    for (const [oldKey, old] of this.entries) {
      if (this.bytes <= this.maxBytes || oldKey === key) break;
      this.entries.delete(oldKey);
      this.bytes -= old.bytes;
      disposeLayers(old.layers);
    }
    if (this.bytes > this.maxBytes) {
      // The new entry alone is over budget: do not keep it.
      this.entries.delete(key);
      this.bytes -= bytes;
      disposeLayers(entry.layers);
    }
  }

  clear(): void {
    for (const entry of this.entries.values()) disposeLayers(entry.layers);
    this.entries.clear();
    this.bytes = 0;
  }
}

export function disposeLayers(layers: KvBlock[][]): void {
  for (const blocks of layers) {
    for (const b of blocks) {
      b.k.dispose();
      b.v.dispose();
    }
  }
}

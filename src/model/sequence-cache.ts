/**
 * Keys and values of whole sequences the sampler has run, one row each (a prompt and the tokens
 * sampled after it, all but the last, which was never fed back), so that a later prompt continuing
 * one (the next turn of a conversation: the earlier prompt, its answer, the env's reply) prefills only
 * its new tokens. vLLM's automatic prefix caching does this per block; here it is per row: a lookup
 * finds the entry sharing the longest token prefix with a prompt, and any prefix of an entry can be
 * used (an answer the chat template re-tokenises differently still reuses everything before that).
 *
 * Entries are indexed by chained hashes of their first 16, 32, ... tokens (a hit is checked against
 * the tokens themselves), kept within a byte budget by dropping the least recently used, and must be
 * cleared when the weights change (the sampler does). The budget counts the arrays entries keep
 * alive: a batch's rows share one array, freed with the last of its entries.
 */
import type { KvBlock } from './kv-cache-attention.ts';

/** Tokens per hashed block: the shortest prefix a lookup can find. */
export const SEQUENCE_BLOCK = 16;

/**
 * Rows of keys and values, per layer [R, Hkv, N, hd]; row r's first `lengths[r]` slots are its
 * sequence. Shared by the entries of its rows; freed with the last of them.
 */
export class SequenceRows {
  private users = 0;
  constructor(
    readonly layers: KvBlock[],
    readonly lengths: readonly number[],
  ) {}

  /** Bytes of all its rows (every row holds N slots), whichever of them entries use. */
  get bytes(): number {
    const [rows, heads, slots, dim] = this.layers[0].k.shape;
    return 2 * rows * heads * slots * dim * 4 * this.layers.length;
  }

  retain(): void {
    this.users++;
  }

  release(): void {
    if (--this.users > 0) return;
    for (const b of this.layers) {
      b.k.dispose();
      b.v.dispose();
    }
  }
}

export type SequenceEntry = { tokens: readonly number[]; rows: SequenceRows; row: number };
/** A prompt's longest cached prefix: `length` tokens of `entry`'s row (of its rows' layers). */
export type SequenceMatch = { entry: SequenceEntry; length: number };

type Stored = SequenceEntry & { key: string; blocks: string[] };

export type SequenceCacheOptions = {
  /** Bytes of keys and values kept at most (default 256 MiB). */
  maxBytes?: number;
};

/** Chained hashes of tokens[0 .. 16(i + 1)) for every whole block within `limit` tokens. */
function blockHashes(tokens: readonly number[], limit = tokens.length): string[] {
  const out: string[] = [];
  // Two independent 32-bit FNV-1a style chains: a false match needs both to collide (and is checked anyway).
  let a = 0x811c9dc5;
  let b = 0x01000193;
  const blocks = Math.floor(Math.min(limit, tokens.length) / SEQUENCE_BLOCK);
  for (let i = 0; i < blocks; i++) {
    for (let j = i * SEQUENCE_BLOCK; j < (i + 1) * SEQUENCE_BLOCK; j++) {
      a = Math.imul(a ^ tokens[j], 0x01000193) >>> 0;
      b = Math.imul(b ^ (tokens[j] + 0x9e3779b9), 0x85ebca6b) >>> 0;
    }
    out.push(`${i}:${a.toString(36)}:${b.toString(36)}`);
  }
  return out;
}

function commonLength(a: readonly number[], b: readonly number[], from: number, limit: number): number {
  let n = from;
  while (n < limit && a[n] === b[n]) n++;
  return n;
}

export class SequenceCache {
  private readonly entries = new Map<string, Stored>();
  private readonly index = new Map<string, Set<Stored>>();
  /** Entries per array: an array's bytes count while it has one. */
  private readonly arrays = new Map<SequenceRows, number>();
  private readonly maxBytes: number;
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(options: SequenceCacheOptions = {}) {
    this.maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
    if (!(this.maxBytes >= 0)) throw new Error(`SequenceCache: maxBytes must be >= 0, got ${options.maxBytes}`);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes of the arrays the entries keep alive. */
  get bytesHeld(): number {
    return this.bytes;
  }

  /**
   * The entry sharing the longest prefix (at least one block, at most `maxLength` tokens) with
   * `prompt`, or null. The entry becomes the most recently used; its arrays stay valid until the
   * next insert() or clear(), so take references to what you need before either.
   */
  match(prompt: readonly number[], maxLength = prompt.length): SequenceMatch | null {
    const limit = Math.min(maxLength, prompt.length);
    const hashes = blockHashes(prompt, limit);
    let candidates: Set<Stored> | undefined;
    let depth = 0;
    for (let i = 0; i < hashes.length; i++) {
      const set = this.index.get(hashes[i]);
      if (!set) break;
      candidates = set;
      depth = i + 1;
    }
    let best: Stored | null = null;
    let bestLength = 0;
    for (const entry of candidates ?? []) {
      const verified = depth * SEQUENCE_BLOCK;
      if (commonLength(entry.tokens, prompt, 0, verified) < verified) continue; // a hash collision
      const length = commonLength(entry.tokens, prompt, verified, Math.min(limit, entry.tokens.length));
      if (length > bestLength) {
        best = entry;
        bestLength = length;
      }
    }
    if (!best) {
      this.misses++;
      return null;
    }
    this.hits++;
    this.entries.delete(best.key);
    this.entries.set(best.key, best);
    return { entry: best, length: bestLength };
  }

  /**
   * Stores row `row` of `rows` for each sequence (tokens[i] for rows[i]): the arrays are taken over
   * and freed once no entry uses them. Sequences shorter than a block, or already cached, are not kept.
   */
  insert(rows: SequenceRows, sequences: { tokens: readonly number[]; row: number }[]): void {
    rows.retain(); // held while the new entries are added, so evicting the others cannot free it
    for (const { tokens, row } of sequences) {
      if (tokens.length < SEQUENCE_BLOCK || tokens.length > rows.lengths[row]) continue;
      const key = tokens.join(',');
      if (this.entries.has(key)) continue;
      const entry: Stored = { tokens, rows, row, key, blocks: blockHashes(tokens) };
      rows.retain();
      const users = this.arrays.get(rows) ?? 0;
      if (users === 0) this.bytes += rows.bytes;
      this.arrays.set(rows, users + 1);
      this.entries.set(key, entry);
      for (const h of entry.blocks) {
        let set = this.index.get(h);
        if (!set) this.index.set(h, (set = new Set()));
        set.add(entry);
      }
    }
    // Least recently used first (Map order) until the arrays left fit; an array over the budget on
    // its own is not kept either.
    for (const entry of this.entries.values()) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(entry);
    }
    rows.release();
  }

  clear(): void {
    for (const entry of [...this.entries.values()]) this.remove(entry);
  }

  private remove(entry: Stored): void {
    this.entries.delete(entry.key);
    const users = this.arrays.get(entry.rows)! - 1;
    if (users === 0) {
      this.arrays.delete(entry.rows);
      this.bytes -= entry.rows.bytes;
    } else this.arrays.set(entry.rows, users);
    for (const h of entry.blocks) {
      const set = this.index.get(h);
      set?.delete(entry);
      if (set?.size === 0) this.index.delete(h);
    }
    entry.rows.release();
  }
}

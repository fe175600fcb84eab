/**
 * The keys and values of a batch of rows being generated. jax-js arrays are immutable, so writing
 * one token into a big cache would copy all of it every step; instead, per layer:
 *   shared  blocks with batch 1 (a cached system prompt), attended to by every row, never copied;
 *   past    [B, Hkv, capacity, hd]: the rows' prompts, then their decoded tokens, one block at a time;
 *   open    [B, Hkv, K, hd]: where decode steps write, one slot per step (a K-slot masked write).
 * When the open block is full it is merged into `past` at the next free offset (one pass over
 * `past` every K steps), growing `past` to the next power of two when needed. So a decode step
 * sees only (batch, shared widths, capacity, K): few distinct compiled shapes however long the
 * generation, and a fixed number of attention blocks.
 *
 * Validity is kept on the JS side (rows have different prompt lengths; padded slots are holes)
 * and turned into the attention mask every step.
 */
import type { ModelConfig } from './config.ts';
import { np, type Tensor } from './engine.ts';
import type { KvBlock } from './kv-cache-attention.ts';
import { MASKED } from './layers.ts';

/** Writes `open` into `past` at slots [offset, offset + K) of every row; consumes past and open. */
export type MergeFn = (past: Tensor, open: Tensor, offset: number) => Tensor;

/** Smallest power of two >= n, at least 32: the capacities `past` takes. */
export function pastCapacity(n: number): number {
  let c = 32;
  while (c < n) c *= 2;
  return c;
}

export class KvCache {
  private disposed = false;
  private open: KvBlock[] | null = null;
  /** Slots of the open block written so far (the same in every row). */
  private openFill = 0;
  /** The slot of `past` where decoding began: decode step j writes every row's token j at decodeStart + j. */
  private readonly decodeStart: number;

  /**
   * Takes ownership of the arrays. `pastValid` is [batch * capacity] (1 = a real key),
   * `pastUsed` the first slot of `past` no row uses yet, `positions[b]` the RoPE position of the
   * row's next token; `decodeStart` (default pastUsed) where decoding began.
   */
  constructor(
    readonly cfg: ModelConfig,
    readonly batch: number,
    readonly blockSize: number,
    private shared: KvBlock[][],
    private past: KvBlock[],
    private pastValid: Uint8Array,
    private pastUsed: number,
    readonly positions: Int32Array,
    decodeStart = pastUsed,
  ) {
    this.decodeStart = decodeStart;
    if (shared.length !== cfg.numLayers || past.length !== cfg.numLayers) throw new Error(`KvCache: ${cfg.numLayers} layers expected`);
    if (positions.length !== batch) throw new Error(`KvCache: ${positions.length} positions for batch ${batch}`);
    if (pastValid.length !== batch * this.capacity) throw new Error(`KvCache: validity has ${pastValid.length} entries, expected ${batch * this.capacity}`);
  }

  /** Builds a cache from a prefill: `prompt` [B, Hkv, C, hd] per layer, row b holding `lengths[b]` real tokens. */
  static fromPrefill(
    cfg: ModelConfig,
    blockSize: number,
    shared: KvBlock[][],
    sharedLength: number,
    prompt: KvBlock[],
    lengths: number[],
  ): KvCache {
    const batch = lengths.length;
    const C = prompt[0].k.shape[2];
    const capacity = pastCapacity(C + blockSize);
    const pad = (x: Tensor) => np.concatenate([x, np.zeros([batch, cfg.numKvHeads, capacity - C, cfg.headDim])], 2);
    const past = prompt.map((b) => ({ k: pad(b.k), v: pad(b.v) }));
    const valid = new Uint8Array(batch * capacity);
    lengths.forEach((len, b) => valid.fill(1, b * capacity, b * capacity + len));
    const positions = Int32Array.from(lengths, (len) => sharedLength + len);
    return new KvCache(cfg, batch, blockSize, shared, past, valid, C, positions);
  }

  /**
   * Builds a cache from a prefill over rows' own pasts (SequenceCache hits): `rowPast` [B, Hkv, W, hd]
   * per layer with row b's first `pastLengths[b]` slots real, then the chunk [B, Hkv, C, hd] with
   * `chunkLengths[b]` real tokens. No shared blocks.
   */
  static fromRowPrefill(cfg: ModelConfig, blockSize: number, rowPast: KvBlock[], pastLengths: number[], chunk: KvBlock[], chunkLengths: number[]): KvCache {
    const batch = chunkLengths.length;
    const W = rowPast[0].k.shape[2];
    const C = chunk[0].k.shape[2];
    const capacity = pastCapacity(W + C + blockSize);
    const zeros = () => np.zeros([batch, cfg.numKvHeads, capacity - W - C, cfg.headDim]);
    const past = rowPast.map((p, l) => ({
      k: np.concatenate([p.k, chunk[l].k, zeros()], 2),
      v: np.concatenate([p.v, chunk[l].v, zeros()], 2),
    }));
    const valid = new Uint8Array(batch * capacity);
    for (let b = 0; b < batch; b++) {
      valid.fill(1, b * capacity, b * capacity + pastLengths[b]);
      valid.fill(1, b * capacity + W, b * capacity + W + chunkLengths[b]);
    }
    const positions = Int32Array.from(chunkLengths, (len, b) => pastLengths[b] + len);
    const shared = Array.from({ length: cfg.numLayers }, () => [] as KvBlock[]);
    return new KvCache(cfg, batch, blockSize, shared, past, valid, W + C, positions);
  }

  get capacity(): number {
    return this.past[0].k.shape[2];
  }

  private get sharedWidth(): number {
    return this.shared[0].reduce((n, b) => n + b.k.shape[2], 0);
  }

  /**
   * The open slot the next decode step writes; when the open block is full it is first merged
   * into `past` (with `merge`, the compiled write), growing `past` if needed.
   */
  nextSlot(merge: MergeFn): number {
    this.check();
    const K = this.blockSize;
    if (!this.open) {
      const shape = [this.batch, this.cfg.numKvHeads, K, this.cfg.headDim];
      this.open = this.past.map(() => ({ k: np.zeros(shape), v: np.zeros(shape) }));
      this.openFill = 0;
    }
    if (this.openFill < K) return this.openFill;
    if (this.pastUsed + K > this.capacity) this.grow(pastCapacity(this.pastUsed + K));
    const offset = this.pastUsed;
    this.past = this.past.map((p, l) => ({
      k: merge(p.k, (this.open as KvBlock[])[l].k.ref, offset),
      v: merge(p.v, (this.open as KvBlock[])[l].v.ref, offset),
    }));
    const cap = this.capacity;
    for (let b = 0; b < this.batch; b++) this.pastValid.fill(1, b * cap + offset, b * cap + offset + K);
    this.pastUsed += K;
    this.openFill = 0;
    return 0;
  }

  private grow(capacity: number): void {
    const old = this.capacity;
    const extra = [this.batch, this.cfg.numKvHeads, capacity - old, this.cfg.headDim];
    this.past = this.past.map((p) => ({ k: np.concatenate([p.k, np.zeros(extra)], 2), v: np.concatenate([p.v, np.zeros(extra)], 2) }));
    const valid = new Uint8Array(this.batch * capacity);
    for (let b = 0; b < this.batch; b++) valid.set(this.pastValid.subarray(b * old, (b + 1) * old), b * capacity);
    this.pastValid = valid;
  }

  /** Per layer [...shared, past, open], a reference added to each (for a jit call that consumes them). */
  blocksRef(): KvBlock[][] {
    this.check();
    if (!this.open) throw new Error('KvCache.blocksRef: call nextSlot() first');
    const open = this.open;
    return this.shared.map((blocks, l) => [...blocks, this.past[l], open[l]].map((b) => ({ k: b.k.ref, v: b.v.ref })));
  }

  /** After a decode step wrote slot `slot` of the open block: takes the new open blocks. */
  commitDecode(open: KvBlock[], slot: number): void {
    this.check();
    for (const b of this.open ?? []) {
      b.k.dispose();
      b.v.dispose();
    }
    this.open = open;
    this.openFill = slot + 1;
    for (let b = 0; b < this.batch; b++) this.positions[b]++;
  }

  /** Additive mask [B, 1, 1, shared + capacity + K] for the step writing open slot `slot`. */
  decodeMask(slot: number): Tensor {
    const S = this.sharedWidth;
    const cap = this.capacity;
    const width = S + cap + this.blockSize;
    const data = new Float32Array(this.batch * width).fill(MASKED);
    for (let b = 0; b < this.batch; b++) {
      const row = b * width;
      data.fill(0, row, row + S);
      for (let t = 0; t < cap; t++) if (this.pastValid[b * cap + t]) data[row + S + t] = 0;
      data.fill(0, row + S + cap, row + S + cap + slot + 1);
    }
    return np.array(data).reshape([this.batch, 1, 1, width]);
  }

  /**
   * A new cache whose row i is this cache's row `rows[i]` (repeats allowed: n samples of a prompt,
   * padding rows; a subset: dropping finished rows). Shared blocks are kept, not copied. This cache
   * stays valid; dispose it separately.
   */
  selectRows(rows: number[]): KvCache {
    this.check();
    for (const r of rows) if (!Number.isInteger(r) || r < 0 || r >= this.batch) throw new Error(`KvCache.selectRows: row ${r} out of range`);
    const identity = rows.length === this.batch && rows.every((r, i) => r === i);
    const index = np.array(Int32Array.from(rows), { dtype: np.int32 });
    const pick = (x: Tensor) => (identity ? x.ref : np.take(x.ref, index.ref, 0));
    const cap = this.capacity;
    const valid = new Uint8Array(rows.length * cap);
    rows.forEach((r, i) => valid.set(this.pastValid.subarray(r * cap, (r + 1) * cap), i * cap));
    const out = new KvCache(
      this.cfg,
      rows.length,
      this.blockSize,
      this.shared.map((blocks) => blocks.map((b) => ({ k: b.k.ref, v: b.v.ref }))),
      this.past.map((b) => ({ k: pick(b.k), v: pick(b.v) })),
      valid,
      this.pastUsed,
      Int32Array.from(rows, (r) => this.positions[r]),
      this.decodeStart,
    );
    if (this.open) {
      out.open = this.open.map((b) => ({ k: pick(b.k), v: pick(b.v) }));
      out.openFill = this.openFill;
    }
    index.dispose();
    return out;
  }

  /**
   * Rows as contiguous sequences (for SequenceCache): per layer [n, Hkv, N, hd] whose slot t holds
   * token t of row rows[i]'s sequence: the shared blocks, its prompt's real slots, then its first
   * `fed[i]` decoded tokens (a row that stopped earlier has garbage after them). `lengths[i]` is
   * that sequence's length, N the longest. This cache stays valid.
   */
  extractRows(rows: readonly number[], fed: readonly number[]): { layers: KvBlock[]; lengths: number[] } {
    this.check();
    const cap = this.capacity;
    const K = this.blockSize;
    // A slot s of a row names past slot s when s < cap, else open slot s - cap.
    const slotLists = rows.map((r, i) => {
      if (!Number.isInteger(r) || r < 0 || r >= this.batch) throw new Error(`KvCache.extractRows: row ${r} out of range`);
      const slots: number[] = [];
      for (let t = 0; t < this.decodeStart; t++) if (this.pastValid[r * cap + t]) slots.push(t);
      for (let j = 0; j < fed[i]; j++) {
        const v = this.decodeStart + j;
        if (v < this.pastUsed) slots.push(v);
        else if (v - this.pastUsed < this.openFill) slots.push(cap + v - this.pastUsed);
        else throw new Error(`KvCache.extractRows: row ${r} has ${fed[i]} decoded tokens, the cache ${this.pastUsed - this.decodeStart + this.openFill}`);
      }
      return slots;
    });
    const S = this.sharedWidth;
    const own = Math.max(1, ...slotLists.map((s) => s.length));
    const n = rows.length;
    // Gathered from past and from the open block separately and chosen between per slot, so `past`
    // is never copied whole (concatenating it with the open block first was the largest kernel of a
    // Blackjack rollout round at 256 rows: 8 % of it on one thread, ~3 % of the rollouts on two).
    // Pure data movement: the keys and values are the same bits.
    const pastIndex = new Int32Array(n * own);
    const openIndex = new Int32Array(n * own);
    const fromOpen = new Float32Array(n * own);
    slotLists.forEach((slots, i) => {
      for (let t = 0; t < own; t++) {
        const s = slots[t] ?? slots[0] ?? 0;
        const at = i * own + t;
        if (s < cap) pastIndex[at] = rows[i] * cap + s;
        else {
          openIndex[at] = rows[i] * K + s - cap;
          fromOpen[at] = 1;
        }
      }
    });
    const { numKvHeads: H, headDim: hd } = this.cfg;
    const pastTake = np.array(pastIndex, { dtype: np.int32 });
    // Only when some slot is in the open block (which then exists).
    const openTake = fromOpen.includes(1)
      ? { index: np.array(openIndex, { dtype: np.int32 }), mask: np.array(fromOpen).reshape([n * own, 1]).greater(0.5) }
      : null;
    const flat = (x: Tensor, slots: number) => x.ref.transpose([0, 2, 1, 3]).reshape([this.batch * slots, H * hd]);
    const gather = (past: Tensor, open: Tensor | undefined, shared: Tensor[]): Tensor => {
      let rowsFlat = np.take(flat(past, cap), pastTake.ref, 0);
      if (openTake) rowsFlat = np.where(openTake.mask.ref, np.take(flat(open!, K), openTake.index.ref, 0), rowsFlat);
      const picked = rowsFlat.reshape([n, own, H, hd]).transpose([0, 2, 1, 3]);
      if (S === 0) return picked;
      const prefix = np.concatenate(shared.map((t) => t.ref), 2); // [1, H, S, hd]
      return np.concatenate([np.broadcastTo(prefix, [n, H, S, hd]), picked], 2);
    };
    const layers = this.past.map((p, l) => ({
      k: gather(p.k, this.open?.[l].k, this.shared[l].map((b) => b.k)),
      v: gather(p.v, this.open?.[l].v, this.shared[l].map((b) => b.v)),
    }));
    pastTake.dispose();
    openTake?.index.dispose();
    openTake?.mask.dispose();
    return { layers, lengths: slotLists.map((s) => S + s.length) };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const b of [...this.shared.flat(), ...this.past, ...(this.open ?? [])]) {
      b.k.dispose();
      b.v.dispose();
    }
    this.shared = [];
    this.past = [];
    this.open = null;
  }

  private check(): void {
    if (this.disposed) throw new Error('KvCache: used after dispose()');
  }
}

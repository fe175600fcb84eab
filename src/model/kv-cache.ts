/**
 * The keys and values of a batch of rows being generated, kept as a list of blocks per layer
 * rather than one preallocated array: jax-js arrays are immutable, so writing one token into a big
 * cache would copy all of it every step. Here a step rewrites only the small current decode block
 * (a masked write at one slot), and a full block is simply kept while a new zero block is appended.
 *
 * Segments (the same for every layer), in order: shared blocks (batch 1, e.g. a cached system
 * prompt), the rows' prompt block, decode blocks. Each segment records, per row, how many of its
 * slots hold real keys; the attention mask is built from that on the JS side every step.
 */
import type { ModelConfig } from './config.ts';
import { np, type Tensor } from './engine.ts';
import type { KvBlock } from './kv-cache-attention.ts';
import { MASKED } from './layers.ts';

export type SegmentKind = 'shared' | 'prompt' | 'decode';

export type Segment = {
  kind: SegmentKind;
  width: number;
  /** Per row: slots [0, valid[b]) hold real keys. */
  valid: Int32Array;
};

export class KvCache {
  private disposed = false;

  /**
   * Takes ownership of `layers` (per layer, one block per segment). `positions[b]` is the RoPE
   * position the row's next token gets.
   */
  constructor(
    readonly cfg: ModelConfig,
    readonly batch: number,
    private layers: KvBlock[][],
    readonly segments: Segment[],
    readonly positions: Int32Array,
  ) {
    if (layers.length !== cfg.numLayers) throw new Error(`KvCache: ${layers.length} layers given, config has ${cfg.numLayers}`);
    for (const blocks of layers) {
      if (blocks.length !== segments.length) throw new Error(`KvCache: ${blocks.length} blocks in a layer, ${segments.length} segments`);
    }
    if (positions.length !== batch) throw new Error(`KvCache: ${positions.length} positions for batch ${batch}`);
  }

  /** Total key slots across segments. */
  get slots(): number {
    return this.segments.reduce((n, s) => n + s.width, 0);
  }

  /** Every layer's blocks with a reference added for each (for a jit call that consumes them). */
  blocksRef(): KvBlock[][] {
    this.check();
    return this.layers.map((blocks) => blocks.map((b) => ({ k: b.k.ref, v: b.v.ref })));
  }

  /** The current (last) segment, where the next decode token is written, or null when it is full or not a decode block. */
  openDecodeSlot(): number | null {
    const last = this.segments[this.segments.length - 1];
    if (!last || last.kind !== 'decode') return null;
    const used = last.valid[0];
    return used < last.width ? used : null;
  }

  /** Appends a zero decode block of `width` slots to every layer. */
  appendDecodeBlock(width: number): void {
    this.check();
    const shape = [this.batch, this.cfg.numKvHeads, width, this.cfg.headDim];
    for (const blocks of this.layers) blocks.push({ k: np.zeros(shape), v: np.zeros(shape) });
    this.segments.push({ kind: 'decode', width, valid: new Int32Array(this.batch) });
  }

  /** Replaces the last block of every layer (after a step wrote a slot) and marks slot `slot` valid in every row. */
  commitDecode(lastBlocks: KvBlock[], slot: number): void {
    this.check();
    if (lastBlocks.length !== this.layers.length) throw new Error('KvCache.commitDecode: one block per layer expected');
    this.layers.forEach((blocks, l) => {
      const old = blocks[blocks.length - 1];
      old.k.dispose();
      old.v.dispose();
      blocks[blocks.length - 1] = lastBlocks[l];
    });
    this.segments[this.segments.length - 1].valid.fill(slot + 1);
    for (let b = 0; b < this.batch; b++) this.positions[b]++;
  }

  /**
   * Additive mask [B, 1, 1, slots] for a one-token decode step that writes slot `slot` of the last
   * (open) block: every valid slot of the row, and that slot.
   */
  decodeMask(slot: number): Tensor {
    const width = this.slots;
    const data = new Float32Array(this.batch * width).fill(MASKED);
    const last = this.segments.length - 1;
    for (let b = 0; b < this.batch; b++) {
      let offset = b * width;
      this.segments.forEach((s, i) => {
        data.fill(0, offset, offset + (i === last ? slot + 1 : s.valid[b]));
        offset += s.width;
      });
    }
    return np.array(data).reshape([this.batch, 1, 1, width]);
  }

  /**
   * A new cache whose row i is this cache's row `rows[i]` (repeats allowed: n samples of a prompt,
   * padding rows; a subset: dropping finished rows). Shared blocks are kept, not copied.
   * This cache stays valid; dispose it separately.
   */
  selectRows(rows: number[]): KvCache {
    this.check();
    for (const r of rows) if (!Number.isInteger(r) || r < 0 || r >= this.batch) throw new Error(`KvCache.selectRows: row ${r} out of range`);
    const identity = rows.length === this.batch && rows.every((r, i) => r === i);
    const index = np.array(Int32Array.from(rows), { dtype: np.int32 });
    const layers = this.layers.map((blocks) =>
      blocks.map((b, i) =>
        this.segments[i].kind === 'shared' || identity
          ? { k: b.k.ref, v: b.v.ref }
          : { k: np.take(b.k.ref, index.ref, 0), v: np.take(b.v.ref, index.ref, 0) },
      ),
    );
    index.dispose();
    const segments = this.segments.map((s) => ({ ...s, valid: Int32Array.from(rows, (r) => s.valid[r]) }));
    return new KvCache(this.cfg, rows.length, layers, segments, Int32Array.from(rows, (r) => this.positions[r]));
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const blocks of this.layers) {
      for (const b of blocks) {
        b.k.dispose();
        b.v.dispose();
      }
    }
    this.layers = [];
  }

  private check(): void {
    if (this.disposed) throw new Error('KvCache: used after dispose()');
  }
}

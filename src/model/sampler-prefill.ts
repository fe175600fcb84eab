/**
 * Prefill of a batch of distinct prompts: the part every prompt shares comes from the prefix cache
 * (computed once, batch 1, attended to by every row), the rest of each prompt is run as one
 * right-padded chunk per row. Returns a KvCache with one row per distinct prompt and log p of the
 * token after each prompt.
 */
import { blockUntilReady, np, type Tensor } from './engine.ts';
import type { KvBlock } from './kv-cache-attention.ts';
import { KvCache } from './kv-cache.ts';
import { rowRope, type CachedForward } from './kv-cache-forward.ts';
import { MASKED } from './layers.ts';
import { refWeights, type GenerationWeights } from './sampler-weights.ts';
import { commonPrefixLength, disposeLayers, type PrefixCache, type PrefixEntry } from './prefix-cache.ts';
import type { SequenceCache, SequenceMatch } from './sequence-cache.ts';

export type PrefillOptions = {
  prefixCache: PrefixCache | null;
  /**
   * Cached prefixes are cut to a multiple of this many tokens (the rest of a shared prefix is run
   * with each row). Every distinct cached length is a new compiled shape (~0.3 s each), and the
   * common prefix of a batch varies from batch to batch; a granule bounds the distinct lengths.
   */
  prefixGranule: number;
  /** Upper bound on attention-score elements (rows x heads x chunk x keys) per prefill call. */
  maxScoreElements: number;
  /** Slots per open decode block of the cache it returns. */
  blockSize: number;
  /** Sequences run before (earlier turns of the same conversations), whose keys and values a prompt may continue. */
  sequenceCache?: SequenceCache | null;
};

export type PrefillStats = {
  /** Tokens run through the model (padding excluded). */
  tokens: number;
  /** Prompt tokens served from the prefix cache or cached sequences instead. */
  reusedTokens: number;
  /** Of those, the ones from cached sequences (SequenceCache: earlier turns). */
  sequenceReusedTokens: number;
  /** Prompt rows prefilled (distinct prompts). */
  rows: number;
};

/** `logprobs[i]`: log p of the token after prompt i (length V). */
export type PrefillResult = { cache: KvCache; logprobs: Float32Array[]; stats: PrefillStats };

/** Smallest power of two >= n (and >= min). */
export function bucket(n: number, min = 1): number {
  let b = min;
  while (b < n) b *= 2;
  return b;
}

/** Chunk widths: multiples of 16 up to 64, then powers of two (few distinct compiled shapes). */
export function chunkBucket(n: number): number {
  if (n <= 64) return Math.max(16, Math.ceil(n / 16) * 16);
  return bucket(n, 64);
}

/**
 * A chunk's rows after their pasts: row i's tokens sit at positions pastLengths[i] + t. The past
 * blocks span `pastWidth` slots (batch 1: a shared prefix every row sees whole; batch B: each row's
 * own, of which its first pastLengths[i] slots are real).
 */
type ChunkRows = { tokens: number[][]; pastWidth: number; pastLengths: number[] };

/**
 * Runs chunks of `rows.tokens` over the `past` blocks. Returns the chunk's blocks per layer
 * [B, Hkv, C, hd] (B = the padded row count) and each row's next-token log-probabilities.
 */
async function prefillChunk(
  fwd: CachedForward,
  weights: GenerationWeights,
  past: KvBlock[][],
  rows: ChunkRows,
  width: number,
  batch: number,
): Promise<{ blocks: KvBlock[]; logprobs: Float32Array[] }> {
  const { cfg } = fwd;
  const C = width;
  const P = rows.pastWidth;
  const tokens = new Int32Array(batch * C);
  const positions = new Int32Array(batch * C);
  const mask = new Float32Array(batch * C * (P + C)).fill(MASKED);
  const pick = new Float32Array(batch * C);
  for (let b = 0; b < batch; b++) {
    const real = b < rows.tokens.length ? b : 0; // padding rows repeat row 0
    const row = rows.tokens[real];
    const pastLength = rows.pastLengths[real];
    for (let t = 0; t < C; t++) {
      tokens[b * C + t] = t < row.length ? row[t] : 0;
      positions[b * C + t] = pastLength + t;
      const m = (b * C + t) * (P + C);
      mask.fill(0, m, m + pastLength); // the row's past
      // Causal within the row's real tokens; padded queries see at least themselves (no empty softmax).
      mask.fill(0, m + P, m + P + Math.min(t, row.length - 1) + 1);
      if (t >= row.length) mask[m + P + t] = 0;
    }
    pick[b * C + row.length - 1] = 1;
  }
  const out = fwd.prefill(
    refWeights(weights),
    {
      tokens: np.array(tokens, { dtype: np.int32 }).reshape([batch, C]),
      rope: rowRope(cfg, fwd.invFreq, positions, batch),
      mask: np.array(mask).reshape([batch, 1, C, P + C]),
      pick: np.array(pick).reshape([batch, 1, C]),
    },
    past,
  );
  const flat = (await out.logprobs.data()) as Float32Array;
  // Decode steps run their kernels synchronously (sampler.ts); they may not read buffers whose
  // asynchronous (worker pool) work is still pending.
  await blockUntilReady(out.blocks);
  const V = cfg.vocabSize;
  const logprobs = rows.tokens.map((_, i) => flat.slice(i * V, (i + 1) * V));
  return { blocks: out.blocks, logprobs };
}

function refLayers(layers: KvBlock[][]): KvBlock[][] {
  return layers.map((blocks) => blocks.map((b) => ({ k: b.k.ref, v: b.v.ref })));
}

/** Finds (and when several prompts share more than the cache holds, extends) the shared prefix entry. */
async function sharedPrefix(
  fwd: CachedForward,
  weights: GenerationWeights,
  prompts: number[][],
  options: PrefillOptions,
): Promise<{ entry: PrefixEntry; computed: number }> {
  const empty: PrefixEntry = { tokens: [], layers: Array.from({ length: fwd.cfg.numLayers }, () => []) };
  const cache = options.prefixCache;
  if (!cache) return { entry: empty, computed: 0 };
  // Every row keeps at least one token of its own, so its next-token distribution comes from its chunk.
  const limit = Math.min(...prompts.map((p) => p.length)) - 1;
  const found = cache.lookup(prompts, limit) ?? empty;
  const granule = options.prefixGranule;
  const shared = prompts.length > 1 ? Math.floor(Math.min(commonPrefixLength(prompts), limit) / granule) * granule : 0;
  if (shared <= found.tokens.length) return { entry: found, computed: 0 };
  // Extend: run the shared tokens past the cached ones once (batch 1) and cache the result.
  const extra = prompts[0].slice(found.tokens.length, shared);
  const width = chunkBucket(extra.length);
  const start = found.tokens.length;
  const { blocks } = await prefillChunk(fwd, weights, refLayers(found.layers), { tokens: [extra], pastWidth: start, pastLengths: [start] }, width, 1);
  // Keep only the real tokens of the chunk (the padding would otherwise sit inside the prefix).
  const trimmed = blocks.map((b) => {
    const k = width === extra.length ? b.k : b.k.slice([], [], [0, extra.length], []);
    const v = width === extra.length ? b.v : b.v.slice([], [], [0, extra.length], []);
    return { k, v };
  });
  const entry: PrefixEntry = {
    tokens: prompts[0].slice(0, shared),
    layers: found.layers.map((layerBlocks, l) => [...layerBlocks, trimmed[l]]),
  };
  cache.insert({ tokens: entry.tokens, layers: refLayers(entry.layers) });
  return { entry, computed: extra.length };
}

/**
 * The prompts' chunks (row i: `suffixes[i]` after its past of pastLengths[i] tokens). Rows are run
 * in calls of one chunk width each, shortest first, so a few long prompts do not make every row run
 * at their width (the greedy Blackjack table: 270 prompts of ~20 new tokens beside 10 of ~80); a
 * call takes as many rows as the attention-score budget allows (a power of two, padded by repeating
 * its first row). `pastOf(rows)` gives a call's past blocks per layer for those prompt indices
 * (references the call consumes). Returns the chunk blocks of the batch (bucket(n) rows, prompt i at
 * row i, padding rows repeating prompt 0; narrower calls' blocks padded to the widest) and each
 * prompt's next-token log-probabilities.
 */
async function runChunks(
  fwd: CachedForward,
  weights: GenerationWeights,
  suffixes: number[][],
  pastWidth: number,
  pastLengths: number[],
  pastOf: (rows: number[]) => KvBlock[][],
  options: PrefillOptions,
): Promise<{ blocks: KvBlock[]; logprobs: Float32Array[]; lengths: number[] }> {
  const n = suffixes.length;
  const widthOf = (i: number) => chunkBucket(suffixes[i].length);
  // By width (stable): where every row has the same width, the rows stay in prompt order.
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => widthOf(a) - widthOf(b));
  const C = widthOf(order[n - 1]);
  const calls: { rows: number[]; blocks: KvBlock[] }[] = [];
  const logprobs = new Array<Float32Array>(n);
  for (let at = 0; at < n; ) {
    const width = widthOf(order[at]);
    let count = 0;
    while (at + count < n && widthOf(order[at + count]) === width) count++;
    // Rows per call: bounded by the attention-score budget, a power of two.
    let perCall = bucket(count);
    while (perCall > 1 && perCall * fwd.cfg.numHeads * width * (pastWidth + width) > options.maxScoreElements) perCall /= 2;
    const real = order.slice(at, at + Math.min(perCall, count));
    const rows = [...real, ...Array.from({ length: perCall - real.length }, () => real[0])];
    const out = await prefillChunk(
      fwd,
      weights,
      pastOf(rows),
      { tokens: real.map((i) => suffixes[i]), pastLengths: real.map((i) => pastLengths[i]), pastWidth },
      width,
      perCall,
    );
    real.forEach((i, k) => (logprobs[i] = out.logprobs[k]));
    calls.push({ rows, blocks: out.blocks });
    at += real.length;
  }
  // Every call's blocks at the widest width, joined, then in prompt order (with the batch's padding rows).
  const batch = bucket(n);
  const held = calls.flatMap((c) => c.rows); // the prompt each joined row holds
  const where = new Map<number, number>();
  held.forEach((i, k) => where.has(i) || where.set(i, k));
  const identity = held.length === batch && held.every((i, b) => i === (b < n ? b : 0));
  const index = Int32Array.from({ length: batch }, (_, b) => where.get(b < n ? b : 0)!);
  const { numKvHeads: H, headDim: hd } = fwd.cfg;
  const widen = (x: Tensor) => (x.shape[2] === C ? x : np.concatenate([x, np.zeros([x.shape[0], H, C - x.shape[2], hd])], 2));
  const join = (parts: Tensor[]): Tensor => {
    const all = parts.length === 1 ? parts[0] : np.concatenate(parts, 0);
    return identity ? all : np.take(all, np.array(index, { dtype: np.int32 }), 0);
  };
  const blocks: KvBlock[] = calls[0].blocks.map((_, l) => ({
    k: join(calls.map((c) => widen(c.blocks[l].k))),
    v: join(calls.map((c) => widen(c.blocks[l].v))),
  }));
  const lengths = Array.from({ length: batch }, (_, b) => suffixes[b < n ? b : 0].length);
  return { blocks, logprobs, lengths };
}

/** Prefills `prompts` (distinct token lists); the caller owns the returned cache. */
export async function prefillPrompts(fwd: CachedForward, weights: GenerationWeights, prompts: number[][], options: PrefillOptions): Promise<PrefillResult> {
  const sequences = options.sequenceCache;
  if (sequences) {
    // Every row keeps at least its last prompt token to run (its next-token distribution comes from the chunk).
    const matches = prompts.map((p) => sequences.match(p, p.length - 1));
    if (matches.some((m) => m !== null)) return prefillOnRowPasts(fwd, weights, prompts, matches, options);
  }
  const { cfg } = fwd;
  const { entry: prefix, computed } = await sharedPrefix(fwd, weights, prompts, options);
  const P = prefix.tokens.length;
  const suffixes = prompts.map((p) => p.slice(P));
  const chunks = await runChunks(fwd, weights, suffixes, P, prompts.map(() => P), () => refLayers(prefix.layers), options);
  const stats: PrefillStats = {
    tokens: computed + suffixes.reduce((n, s) => n + s.length, 0),
    reusedTokens: P * prompts.length - computed,
    sequenceReusedTokens: 0,
    rows: prompts.length,
  };
  const cache = KvCache.fromPrefill(cfg, options.blockSize, prefix.layers, P, chunks.blocks, chunks.lengths);
  return { cache, logprobs: chunks.logprobs, stats };
}

/** Widths of rows' pasts: multiples of 32 up to 256, then powers of two (few distinct compiled shapes). */
export function pastBucket(n: number): number {
  return n <= 256 ? Math.max(32, Math.ceil(n / 32) * 32) : bucket(n, 256);
}

/**
 * Prefill where some prompts continue a cached sequence (SequenceCache): each row's past is its
 * match's keys and values (the others start from the prompts' cached shared prefix, or from nothing),
 * gathered into [B, Hkv, W, hd] per layer; only what follows each past is run.
 */
async function prefillOnRowPasts(
  fwd: CachedForward,
  weights: GenerationWeights,
  prompts: number[][],
  matches: (SequenceMatch | null)[],
  options: PrefillOptions,
): Promise<PrefillResult> {
  const { cfg } = fwd;
  // Held until gathered: another batch's insert may evict these entries while this one awaits.
  for (const m of matches) m?.entry.rows.retain();
  try {
    const misses = prompts.filter((_, i) => !matches[i]);
    const shared = misses.length > 0 ? await sharedPrefix(fwd, weights, misses, options) : null;
    const P = shared?.entry.tokens.length ?? 0;
    // The shared prefix as one batch-1 source, [1, Hkv, P, hd] per layer.
    const prefixSource: KvBlock[] | null =
      shared && P > 0
        ? shared.entry.layers.map((blocks) => ({ k: np.concatenate(blocks.map((b) => b.k), 2), v: np.concatenate(blocks.map((b) => b.v), 2) }))
        : null;
    if (shared && !prefixSource) disposeLayers(shared.entry.layers);
    const batch = bucket(prompts.length);
    const rowOf = (b: number) => (b < prompts.length ? b : 0); // padding rows repeat row 0
    const pastLengths = prompts.map((_, i) => matches[i]?.length ?? (prefixSource ? P : 0));
    const W = pastBucket(Math.max(...pastLengths));
    // Rows grouped by where their past comes from: one gather per source and layer.
    type Source = { layers: KvBlock[]; batchRows: number[]; sourceRows: number[] };
    const sources = new Map<object, Source>();
    const none: number[] = [];
    for (let b = 0; b < batch; b++) {
      const i = rowOf(b);
      const m = matches[i];
      const layers = m ? m.entry.rows.layers : prefixSource;
      if (!layers) {
        none.push(b);
        continue;
      }
      let s = sources.get(layers);
      if (!s) sources.set(layers, (s = { layers, batchRows: [], sourceRows: [] }));
      s.batchRows.push(b);
      s.sourceRows.push(m ? m.entry.row : 0);
    }
    const order = [...[...sources.values()].flatMap((s) => s.batchRows), ...none];
    const inverse = new Int32Array(batch);
    order.forEach((b, position) => (inverse[b] = position));
    const identity = order.every((b, position) => b === position);
    const { numKvHeads: H, headDim: hd } = cfg;
    const fit = (x: Tensor): Tensor => {
      const N = x.shape[2];
      if (N === W) return x;
      if (N > W) return x.slice([], [], [0, W], []);
      return np.concatenate([x, np.zeros([x.shape[0], H, W - N, hd])], 2);
    };
    const gather = (pick: (layers: KvBlock[]) => Tensor): Tensor => {
      const parts = [...sources.values()].map((s) => fit(np.take(pick(s.layers).ref, np.array(Int32Array.from(s.sourceRows), { dtype: np.int32 }), 0)));
      if (none.length > 0) parts.push(np.zeros([none.length, H, W, hd]));
      const joined = parts.length === 1 ? parts[0] : np.concatenate(parts, 0);
      return identity ? joined : np.take(joined, np.array(inverse, { dtype: np.int32 }), 0);
    };
    const rowPast: KvBlock[] = Array.from({ length: cfg.numLayers }, (_, l) => ({ k: gather((ls) => ls[l].k), v: gather((ls) => ls[l].v) }));
    if (prefixSource) disposeLayers([prefixSource]);

    const suffixes = prompts.map((p, i) => p.slice(pastLengths[i]));
    const pick = (x: Tensor, rows: number[]) =>
      rows.length === batch && rows.every((r, b) => r === b) ? x.ref : np.take(x.ref, np.array(Int32Array.from(rows), { dtype: np.int32 }), 0);
    const chunks = await runChunks(fwd, weights, suffixes, W, pastLengths, (rows) => rowPast.map((p) => [{ k: pick(p.k, rows), v: pick(p.v, rows) }]), options);
    const reused = pastLengths.reduce((n, L) => n + L, 0);
    const stats: PrefillStats = {
      tokens: (shared?.computed ?? 0) + suffixes.reduce((n, s) => n + s.length, 0),
      reusedTokens: reused - (shared?.computed ?? 0),
      sequenceReusedTokens: matches.reduce((n, m) => n + (m?.length ?? 0), 0),
      rows: prompts.length,
    };
    const paddedPastLengths = Array.from({ length: batch }, (_, b) => pastLengths[rowOf(b)]);
    const cache = KvCache.fromRowPrefill(cfg, options.blockSize, rowPast, paddedPastLengths, chunks.blocks, chunks.lengths);
    return { cache, logprobs: chunks.logprobs, stats };
  } finally {
    for (const m of matches) m?.entry.rows.release();
  }
}

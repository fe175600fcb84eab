/**
 * Prefill of a batch of distinct prompts: the part every prompt shares comes from the prefix cache
 * (computed once, batch 1, attended to by every row), the rest of each prompt is run as one
 * right-padded chunk per row. Returns a KvCache with one row per distinct prompt and log p of the
 * token after each prompt.
 */
import { blockUntilReady, np } from './engine.ts';
import type { KvBlock } from './kv-cache-attention.ts';
import { KvCache } from './kv-cache.ts';
import { rowRope, type CachedForward } from './kv-cache-forward.ts';
import { MASKED } from './layers.ts';
import { refWeights, type GenerationWeights } from './sampler-weights.ts';
import { commonPrefixLength, type PrefixCache, type PrefixEntry } from './prefix-cache.ts';

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
};

export type PrefillStats = {
  /** Tokens run through the model (padding excluded). */
  tokens: number;
  /** Prompt tokens served from the prefix cache instead. */
  reusedTokens: number;
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

type ChunkRows = { tokens: number[][]; start: number };

/**
 * Runs chunks of `rows.tokens` (row i at positions start .. start + len_i - 1) over shared `past`
 * blocks (batch 1, `start` tokens). Returns the chunk's blocks per layer [B, Hkv, C, hd] (B = the
 * padded row count) and each row's next-token log-probabilities.
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
  const P = rows.start;
  const tokens = new Int32Array(batch * C);
  const positions = new Int32Array(batch * C);
  const mask = new Float32Array(batch * C * (P + C)).fill(MASKED);
  const pick = new Float32Array(batch * C);
  for (let b = 0; b < batch; b++) {
    const row = rows.tokens[b] ?? rows.tokens[0]; // padding rows repeat row 0
    for (let t = 0; t < C; t++) {
      tokens[b * C + t] = t < row.length ? row[t] : 0;
      positions[b * C + t] = P + t;
      const m = (b * C + t) * (P + C);
      mask.fill(0, m, m + P); // the shared prefix
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
  const { blocks } = await prefillChunk(fwd, weights, refLayers(found.layers), { tokens: [extra], start: found.tokens.length }, width, 1);
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

/** Prefills `prompts` (distinct token lists); the caller owns the returned cache. */
export async function prefillPrompts(fwd: CachedForward, weights: GenerationWeights, prompts: number[][], options: PrefillOptions): Promise<PrefillResult> {
  const { cfg } = fwd;
  const { entry: prefix, computed } = await sharedPrefix(fwd, weights, prompts, options);
  const P = prefix.tokens.length;
  const suffixes = prompts.map((p) => p.slice(P));
  const C = chunkBucket(Math.max(...suffixes.map((s) => s.length)));
  const stats: PrefillStats = {
    tokens: computed + suffixes.reduce((n, s) => n + s.length, 0),
    reusedTokens: P * prompts.length - computed,
    rows: prompts.length,
  };

  // Rows per call: bounded by the attention-score budget, a power of two.
  const perRow = cfg.numHeads * C * (P + C);
  let perCall = bucket(prompts.length);
  while (perCall > 1 && perCall * perRow > options.maxScoreElements) perCall /= 2;
  const batch = bucket(prompts.length);
  const parts: KvBlock[][] = [];
  const logprobs: Float32Array[] = [];
  for (let start = 0; start < batch; start += perCall) {
    const rows = suffixes.slice(start, start + perCall);
    const out = await prefillChunk(fwd, weights, refLayers(prefix.layers), { tokens: rows.length > 0 ? rows : [suffixes[0]], start: P }, C, perCall);
    parts.push(out.blocks);
    logprobs.push(...out.logprobs.slice(0, rows.length));
  }
  const promptBlocks: KvBlock[] = parts[0].map((_, l) =>
    parts.length === 1
      ? parts[0][l]
      : { k: np.concatenate(parts.map((p) => p[l].k), 0), v: np.concatenate(parts.map((p) => p[l].v), 0) },
  );
  const lengths = Array.from({ length: batch }, (_, b) => (suffixes[b] ?? suffixes[0]).length);
  const cache = KvCache.fromPrefill(cfg, options.blockSize, prefix.layers, P, promptBlocks, lengths);
  return { cache, logprobs, stats };
}

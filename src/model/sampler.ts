/**
 * Batched autoregressive generation with a KV cache. One `generate` call takes many requests
 * (each with its own prompt, sampling settings, seed and `n`), prefills each distinct prompt once
 * (the `n` samples share it; a prefix common to the prompts comes from the prefix cache), then
 * decodes every sample in one batch, one token per row per step, dropping finished rows as the
 * batch shrinks. Tokens are drawn on the JS side from each row's own seeded Rng, so a request's
 * samples depend only on its seed, not on what else is in the batch.
 *
 * For every sampled token it reports log q (the sampling distribution, after temperature / top-k /
 * top-p) and log p (the untempered model), the latter equal to the training forward's logprob.
 * Each token can also be reported the moment it is drawn (`onToken`, for streaming), and a request
 * whose `signal` aborts has its rows ended at the next step while the rest of the batch goes on.
 */
import { Rng } from '../core/random.ts';
import { yieldToEventLoop } from '../core/event-loop.ts';
import type { ModelConfig } from './config.ts';
import { blockUntilReady, np } from './engine.ts';
import { CachedForward, rowRope } from './kv-cache-forward.ts';
import type { KvCache, MergeFn } from './kv-cache.ts';
import type { Params } from './params.ts';
import { PrefixCache } from './prefix-cache.ts';
import { SequenceCache, SequenceRows } from './sequence-cache.ts';
import { drawToken, type SamplingParams } from './sampler-distribution.ts';
import { prefillPrompts, bucket, type PrefillStats } from './sampler-prefill.ts';
import { disposeWeights, fuseWeights, refWeights, type GenerationWeights } from './sampler-weights.ts';
import { validateSampleRequest, type CheckedSampleRequest, type SampleRequest } from './sampler-request.ts';
import { StopState, type Decode, type StopReason } from './sampler-stop.ts';
import { topLogprobs } from './sampler-top.ts';

export type { SampleRequest, SampledToken } from './sampler-request.ts';
export type { TopLogprobs } from './sampler-top.ts';

export type SampleResult = {
  /** Every sampled id, a final stop token included. */
  tokenIds: number[];
  /** Per token: log q under the sampling distribution. */
  logprobs: number[];
  /** Per token: log p under the untempered model. */
  modelLogprobs: number[];
  /** 'length' also for a cancelled sample (stopReason says which). */
  finishReason: 'stop' | 'length';
  stopReason: StopReason;
  /** Decoded text without a final stop token, cut before a stop string; null without a decoder. */
  text: string | null;
};

export type SamplerOptions = {
  /** Token ids -> text, needed for stop strings and `text`. */
  decode?: Decode;
  /** Slots per decode block of the KV cache (default 32). */
  blockSize?: number;
  /** A prefix cache to share between samplers, false for none (default: a new one). */
  prefixCache?: PrefixCache | false;
  /**
   * Finished sequences (prompt and sample) kept so that a prompt continuing one, the next turn of a
   * conversation, prefills only its new tokens; shared between samplers, or false for none
   * (default: a new one).
   */
  sequenceCache?: SequenceCache | false;
  /** Shared prefixes are cached in multiples of this many tokens (default 32; see PrefillOptions). */
  prefixGranule?: number;
  /** Bound on attention-score elements per prefill call (default 2^24). */
  maxScoreElements?: number;
  /** Seeds the requests that carry no seed of their own. */
  seed?: number;
};

export type SamplerStats = {
  generateCalls: number;
  prefill: PrefillStats;
  decodeSteps: number;
  /** Row-steps computed, padding and finished rows included (batch efficiency = decodeTokens / this). */
  decodeRowSteps: number;
  /** Tokens sampled by decode steps (the first token of each sample comes from its prefill). */
  decodeTokens: number;
  sampledTokens: number;
  /** Wall time in prefill and in the decode loop. */
  prefillMs: number;
  decodeMs: number;
};

type Row = {
  request: number;
  /** Its index among the request's samples. */
  sample: number;
  /** The validated request it samples for (its hooks and topLogprobs). */
  checked: CheckedSampleRequest;
  /** Index of its (distinct) prompt in the prefill. */
  prompt: number;
  params: SamplingParams;
  rng: Rng;
  stop: StopState;
  ids: number[];
  logprobs: number[];
  modelLogprobs: number[];
  /** Its row in the current KV cache (-1 before decoding and once it has left the cache). */
  slot: number;
};

export class Sampler {
  readonly prefixCache: PrefixCache | null;
  readonly sequenceCache: SequenceCache | null;
  /** Bumped by setParams: what a generate() computed with older weights is not cached. */
  private weightsEpoch = 0;
  readonly stats: SamplerStats = {
    generateCalls: 0,
    prefill: { tokens: 0, reusedTokens: 0, sequenceReusedTokens: 0, rows: 0 },
    decodeSteps: 0,
    decodeRowSteps: 0,
    decodeTokens: 0,
    sampledTokens: 0,
    prefillMs: 0,
    decodeMs: 0,
  };
  private readonly fwd: CachedForward;
  private readonly blockSize: number;
  private readonly prefixGranule: number;
  private readonly maxScoreElements: number;
  private readonly seeds: Rng;
  private readonly merge: MergeFn;
  private params: Params;
  /** Fused from `params` at the first generate() after they are set. */
  private weights: GenerationWeights | null = null;

  /** `params` are borrowed: the sampler never disposes them (see setParams). */
  constructor(
    readonly cfg: ModelConfig,
    params: Params,
    private readonly options: SamplerOptions = {},
  ) {
    this.fwd = new CachedForward(cfg);
    this.merge = (past, open, offset) => this.fwd.merge(past, open, offset);
    this.params = params;
    this.blockSize = options.blockSize ?? 32;
    if (!Number.isInteger(this.blockSize) || this.blockSize < 1) throw new Error(`Sampler: blockSize must be a positive integer, got ${options.blockSize}`);
    this.prefixGranule = options.prefixGranule ?? 32;
    if (!Number.isInteger(this.prefixGranule) || this.prefixGranule < 1) throw new Error(`Sampler: prefixGranule must be a positive integer, got ${options.prefixGranule}`);
    this.maxScoreElements = options.maxScoreElements ?? 1 << 24;
    this.prefixCache = options.prefixCache === false ? null : (options.prefixCache ?? new PrefixCache());
    this.sequenceCache = options.sequenceCache === false ? null : (options.sequenceCache ?? new SequenceCache());
    this.seeds = new Rng(options.seed ?? Date.now());
  }

  /** New weights (borrowed): cached prefixes were computed with the old ones and are dropped. */
  setParams(params: Params): void {
    this.params = params;
    if (this.weights) disposeWeights(this.weights);
    this.weights = null;
    this.weightsEpoch++;
    this.clearCaches();
  }

  /** Drops the cached prefixes and sequences (the next prompts are computed whole). */
  clearCaches(): void {
    this.prefixCache?.clear();
    this.sequenceCache?.clear();
  }

  /** Samples `n` completions for each request; result[i][j] is sample j of request i. */
  async generate(requests: SampleRequest[]): Promise<SampleResult[][]> {
    const checked = requests.map((r, i) => validateSampleRequest(r, this.cfg, `requests[${i}]`));
    this.stats.generateCalls++;
    if (checked.length === 0) return [];
    const epoch = this.weightsEpoch;
    const weights = await this.currentWeights();
    try {
      return await this.run(weights, checked, () => this.weightsEpoch === epoch);
    } finally {
      disposeWeights(weights);
    }
  }

  /**
   * References (owned by the caller) to the fused weights of the current params, fused on first use.
   * They are realised before returning: decode steps read them synchronously (see decode()).
   */
  private async currentWeights(): Promise<GenerationWeights> {
    if (!this.weights) {
      const params = this.params;
      const fused = fuseWeights(this.cfg, params);
      await blockUntilReady(fused);
      // New params or another call's fusion arrived meanwhile: these serve this call only.
      if (this.params !== params || this.weights) return fused;
      this.weights = fused;
    }
    return refWeights(this.weights);
  }

  /** `current()`: `weights` are still the params' (so cached sequences match them, and new ones may be kept). */
  private async run(weights: GenerationWeights, requests: CheckedSampleRequest[], current: () => boolean): Promise<SampleResult[][]> {
    // Distinct prompts, each prefilled once.
    const promptIndex = new Map<string, number>();
    const prompts: number[][] = [];
    const requestPrompt = requests.map((r) => {
      const key = r.promptIds.join(',');
      let index = promptIndex.get(key);
      if (index === undefined) {
        index = prompts.length;
        promptIndex.set(key, index);
        prompts.push(r.promptIds);
      }
      return index;
    });
    const prefillStart = performance.now();
    const sequences = current() ? this.sequenceCache : null;
    const prefill = await prefillPrompts(this.fwd, weights, prompts, {
      prefixCache: this.prefixCache,
      sequenceCache: sequences,
      prefixGranule: this.prefixGranule,
      blockSize: this.blockSize,
      maxScoreElements: this.maxScoreElements,
    });
    this.stats.prefillMs += performance.now() - prefillStart;
    this.stats.prefill.tokens += prefill.stats.tokens;
    this.stats.prefill.reusedTokens += prefill.stats.reusedTokens;
    this.stats.prefill.rows += prefill.stats.rows;
    this.stats.prefill.sequenceReusedTokens += prefill.stats.sequenceReusedTokens;

    const rows: Row[] = [];
    requests.forEach((r, i) => {
      const maxTokens = Math.min(r.maxTokens, this.cfg.maxPositionEmbeddings - r.promptIds.length);
      const seed = r.seed ?? this.seeds.nextUint32();
      for (let j = 0; j < r.n; j++) {
        rows.push({
          request: i,
          sample: j,
          checked: r,
          prompt: requestPrompt[i],
          params: { temperature: r.temperature, topK: r.topK, topP: r.topP },
          rng: new Rng(seed, j),
          stop: new StopState({ stopTokenIds: new Set(r.stopTokenIds), stop: r.stop, maxTokens }, this.options.decode ?? null),
          ids: [],
          logprobs: [],
          modelLogprobs: [],
          slot: -1,
        });
      }
    });
    // First token of every sample from its prompt's prefill.
    const live: Row[] = [];
    for (const row of rows) {
      this.accept(row, prefill.logprobs[row.prompt], 0);
      if (!row.stop.reason) live.push(row);
    }
    let cache: KvCache | null = null;
    if (live.length > 0) {
      // One cache row per live sample: the n samples of a prompt start from copies of its row.
      const select = padRows(live.map((row) => row.prompt));
      live.forEach((row, i) => (row.slot = i));
      cache = prefill.cache.selectRows(select);
    }
    prefill.cache.dispose();
    if (cache) await this.decode(weights, cache, live, sequences ? { cache: sequences, current } : null);
    const withText = this.options.decode !== undefined;
    return requests.map((_, i) => rows.filter((row) => row.request === i).map((row) => toResult(row, withText)));
  }

  /**
   * Decodes until every live row stops; disposes `cache` (and its replacements). Rows that stopped
   * are kept in `sequences` (when given) before they leave the cache.
   */
  private async decode(
    weights: GenerationWeights,
    initial: KvCache,
    rows: Row[],
    sequences: { cache: SequenceCache; current: () => boolean } | null,
  ): Promise<void> {
    let cache = initial;
    let live = rows;
    let inCache = rows;
    const K = this.blockSize;
    const start = performance.now();
    try {
      while (live.length > 0) {
        // Compact: once half the rows are done, continue with a smaller batch.
        if (cache.batch > 1 && bucket(live.length) <= cache.batch / 2) {
          if (sequences?.current()) keepSequences(sequences.cache, cache, inCache.filter((row) => row.stop.reason));
          inCache = live;
          const next = cache.selectRows(padRows(live.map((row) => row.slot)));
          cache.dispose();
          cache = next;
          live.forEach((row, i) => (row.slot = i));
        }
        const slot = cache.nextSlot(this.merge);
        const B = cache.batch;
        const tokens = new Int32Array(B);
        for (const row of live) tokens[row.slot] = row.ids[row.ids.length - 1];
        const oneHot = new Float32Array(K);
        oneHot[slot] = 1;
        const out = this.fwd.decode(
          refWeights(weights),
          {
            tokens: np.array(tokens, { dtype: np.int32 }),
            rope: rowRope(this.cfg, this.fwd.invFreq, cache.positions, B),
            mask: cache.decodeMask(slot),
            slot: np.array(oneHot).reshape([1, 1, K, 1]),
          },
          cache.blocksRef(),
        );
        cache.commitDecode(out.last, slot);
        // dataSync runs the step's ~100 small kernels inline on this thread: through jax-js's worker
        // pool (threads > 1) each costs ~45 µs of messaging instead of ~16 µs, more than a second
        // core gains at one token per row (measured on Blackjack's RL rollouts: the pool from 128
        // rows up saved 5-15 % of decode time, from 32 rows up it lost). Then yield, so other
        // requests can be queued meanwhile.
        const logprobs = out.logprobs.dataSync() as Float32Array;
        this.stats.decodeSteps++;
        this.stats.decodeRowSteps += B;
        for (const row of live) this.accept(row, logprobs, row.slot);
        this.stats.decodeTokens += live.length;
        live = live.filter((row) => !row.stop.reason);
        await yieldToEventLoop();
      }
      if (sequences?.current()) keepSequences(sequences.cache, cache, inCache);
    } finally {
      cache.dispose();
      this.stats.decodeMs += performance.now() - start;
    }
  }

  /** Draws the next token of `row` from row `index` of `logprobs` ([rows, V]) and checks its stop rules. */
  private accept(row: Row, logprobs: Float32Array, index: number): void {
    const vocab = this.cfg.vocabSize;
    const draw = drawToken(logprobs, index, vocab, row.params, row.rng);
    row.ids.push(draw.token);
    row.logprobs.push(draw.logprob);
    row.modelLogprobs.push(draw.modelLogprob);
    const { onToken, signal, topLogprobs: k } = row.checked;
    const top = onToken && k > 0 ? topLogprobs(logprobs, index * vocab, vocab, k) : null;
    this.stats.sampledTokens++;
    row.stop.update(row.ids);
    try {
      onToken?.(row.sample, { id: draw.token, logprob: draw.logprob, modelLogprob: draw.modelLogprob, top });
    } catch {
      row.stop.cancel(row.ids); // the listener's failure ends its own sample, not the batch
    }
    if (signal?.aborted) row.stop.cancel(row.ids);
  }

  /** Frees the compiled programs, fused weights and the prefix cache it made (not the borrowed params). */
  dispose(): void {
    this.fwd.dispose();
    if (this.weights) disposeWeights(this.weights);
    this.weights = null;
    if (this.options.prefixCache === undefined) this.prefixCache?.clear();
  }
}

/**
 * Stores finished rows' sequences (prompt and every sampled token but the last, the ones fed to the
 * model) with their keys and values from `cache`, for prompts that continue them.
 */
function keepSequences(sequences: SequenceCache, cache: KvCache, finished: Row[]): void {
  const rows = finished.filter((row) => row.ids.length > 1);
  if (rows.length === 0) return;
  const fed = rows.map((row) => row.ids.length - 1);
  const { layers, lengths } = cache.extractRows(rows.map((row) => row.slot), fed);
  sequences.insert(
    new SequenceRows(layers, lengths),
    rows.map((row, i) => ({ tokens: [...row.checked.promptIds, ...row.ids.slice(0, fed[i])], row: i })),
  );
}

/** Pads a row list to a power-of-two batch by repeating its first row. */
function padRows(rows: number[]): number[] {
  const out = rows.slice();
  const size = bucket(rows.length);
  while (out.length < size) out.push(rows[0]);
  return out;
}

function toResult(row: Row, withText: boolean): SampleResult {
  const reason = row.stop.reason ?? { type: 'length' as const };
  return {
    tokenIds: row.ids,
    logprobs: row.logprobs,
    modelLogprobs: row.modelLogprobs,
    finishReason: reason.type === 'length' || reason.type === 'cancelled' ? 'length' : 'stop',
    stopReason: reason,
    text: withText ? row.stop.text : null,
  };
}

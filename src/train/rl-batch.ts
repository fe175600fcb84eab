/**
 * Training samples (TrainingSample: tokens, loss mask, advantages, sampling logprobs, aligned as
 * targets) → the plain arrays of one optimiser step, laid out for the shared-prefix forward
 * (rl-batch-forward.ts):
 *
 * - The longest token prefix every sample shares (the system prompt and tool descriptions, several
 *   hundred tokens) is computed ONCE per batch and attended to by every row; each row holds only
 *   what follows it. Exactly the same logprobs as the full sequences (causal attention), at a
 *   fraction of the cost: the per-sample part is ~40 tokens where the prompt is ~450.
 * - Several sequences share a row (first-fit decreasing), each seeing the prefix and its own past.
 * - Rows and row length are rounded up (`rowsMultiple`, `lengthMultiple`) so jit compiles a handful
 *   of shapes per run instead of one per step.
 *
 * Sequence token i (i ≥ P) sits at row position j = i − P as an input; the position predicts token
 * i + 1, so the per-target arrays (mask, advantages, logprobs) are read at i + 1.
 */

/** What a row layout needs of a sample (TrainingSample satisfies it; SFT demonstrations too). */
export interface LayoutSample {
  tokens: readonly number[];
  lossMask: readonly number[];
  /** Per target token; absent: 0 (supervised). */
  advantages?: readonly number[];
  /** Per target token: the sampling logprob; absent: 0. */
  logprobs?: readonly number[];
}

export interface LayoutOptions {
  /** Largest shared prefix to use (the trainer keeps it stable across steps); default: no cap. */
  maxPrefix?: number;
  /**
   * The shared prefix is cut down to a multiple of this (default 8): jax-js's Wasm matmuls lose
   * their SIMD tiling on odd sizes (measured: prefix 389 → 12.0 s a step, 384 or 392 → 2.5 s).
   */
  prefixMultiple?: number;
  /** Rows are rounded up to a multiple of this (default 8). */
  rowsMultiple?: number;
  /** Row length is rounded up to a multiple of this (default 32). */
  lengthMultiple?: number;
  /** Shortest row length (default 64), so short batches reuse a compiled shape. */
  minLength?: number;
  /** Fewest rows (default 0): empty rows pad the batch up to it. */
  minRows?: number;
  padId?: number;
}

export interface RlLayout {
  /** The shared prefix's ids (length P; may be 0). */
  prefix: number[];
  rows: number;
  length: number;
  /** [rows·length] input ids and next-token targets (padId outside sequences). */
  inputIds: Int32Array;
  targetIds: Int32Array;
  /** [rows·length] 1 where the target is trained. */
  mask: Float32Array;
  advantages: Float32Array;
  samplingLogprobs: Float32Array;
  /** [rows·length] trained tokens of the position's sequence (for per-sequence length normalisation). */
  sequenceLengths: Float32Array;
  /** [rows·length] RoPE position: P + index within the sequence (continues past a row's end for padding). */
  positions: Int32Array;
  /** [rows·length] which sequence of its row a position belongs to; -1 for padding. */
  segmentIds: Int32Array;
  /** Where each sample went. */
  placements: { row: number; start: number; inputs: number }[];
  /** Σ tokens actually computed per step (prefix once + row positions holding a sequence). */
  computedTokens: number;
  /** Σ tokens of the samples as full sequences (what an unshared forward would compute). */
  sampleTokens: number;
}

/** The longest prefix of every sample that holds no trained target (so row j = 0 never needs the prefix's prediction). */
export function sharedPrefixLength(samples: readonly LayoutSample[], cap = Infinity): number {
  if (samples.length === 0) return 0;
  const first = samples[0].tokens;
  let n = Math.min(cap, ...samples.map((s) => s.tokens.length - 1));
  for (const s of samples) {
    let i = 0;
    while (i < n && s.tokens[i] === first[i]) i++;
    n = i;
    // Targets must start after the prefix's last token: token P (the first row input) is not trained.
    const firstTrained = s.lossMask.indexOf(1);
    if (firstTrained !== -1) n = Math.min(n, firstTrained - 1);
  }
  return Math.max(0, n);
}

function roundUp(x: number, multiple: number): number {
  return Math.ceil(x / multiple) * multiple;
}

export function buildRlLayout(samples: readonly LayoutSample[], options: LayoutOptions = {}): RlLayout {
  if (samples.length === 0) throw new Error('buildRlLayout: no samples');
  samples.forEach((s, i) => {
    if (s.lossMask.length !== s.tokens.length) throw new Error(`buildRlLayout: sample ${i} has ${s.tokens.length} tokens but ${s.lossMask.length} mask values`);
    if (s.tokens.length < 2) throw new Error(`buildRlLayout: sample ${i} has fewer than 2 tokens`);
  });
  const padId = options.padId ?? 0;
  const prefixMultiple = options.prefixMultiple ?? 8;
  const P = Math.floor(sharedPrefixLength(samples, options.maxPrefix) / prefixMultiple) * prefixMultiple;
  const inputsOf = (s: LayoutSample) => s.tokens.length - 1 - P; // row positions a sample takes
  const longest = Math.max(...samples.map(inputsOf));
  const length = Math.max(options.minLength ?? 64, roundUp(longest, options.lengthMultiple ?? 32));

  // First-fit decreasing: longest sequences first, each into the first row with room.
  const order = samples.map((_, i) => i).sort((a, b) => inputsOf(samples[b]) - inputsOf(samples[a]) || a - b);
  const free: number[] = [];
  const rowOf = new Array<number>(samples.length);
  const startOf = new Array<number>(samples.length);
  for (const i of order) {
    const need = inputsOf(samples[i]);
    let r = free.findIndex((f) => f >= need);
    if (r === -1) {
      r = free.length;
      free.push(length);
    }
    rowOf[i] = r;
    startOf[i] = length - free[r];
    free[r] -= need;
  }
  const rows = Math.max(options.minRows ?? 0, roundUp(free.length, options.rowsMultiple ?? 8));

  const size = rows * length;
  const inputIds = new Int32Array(size).fill(padId);
  const targetIds = new Int32Array(size).fill(padId);
  const mask = new Float32Array(size);
  const advantages = new Float32Array(size);
  const samplingLogprobs = new Float32Array(size);
  const sequenceLengths = new Float32Array(size);
  const positions = new Int32Array(size);
  const segmentIds = new Int32Array(size).fill(-1);
  for (let r = 0; r < rows; r++) for (let t = 0; t < length; t++) positions[r * length + t] = P + t;

  const segmentsInRow = new Array<number>(rows).fill(0);
  const placements: RlLayout['placements'] = [];
  let computedTokens = P;
  let sampleTokens = 0;
  // Place in input order so segment ids (and thus the arrays) do not depend on the sort's tie-breaks.
  samples.forEach((s, i) => {
    const row = rowOf[i];
    const start = startOf[i];
    const segment = segmentsInRow[row]++;
    const inputs = inputsOf(s);
    let trained = 0;
    for (let j = 1; j <= inputs; j++) trained += s.lossMask[P + j] ? 1 : 0;
    for (let j = 0; j < inputs; j++) {
      const at = row * length + start + j;
      const target = P + j + 1;
      inputIds[at] = s.tokens[P + j];
      targetIds[at] = s.tokens[target];
      const m = s.lossMask[target] ? 1 : 0;
      mask[at] = m;
      advantages[at] = m ? (s.advantages?.[target] ?? 0) : 0;
      samplingLogprobs[at] = m ? (s.logprobs?.[target] ?? 0) : 0;
      sequenceLengths[at] = trained;
      positions[at] = P + j;
      segmentIds[at] = segment;
    }
    placements.push({ row, start, inputs });
    computedTokens += inputs;
    sampleTokens += s.tokens.length;
  });
  return {
    prefix: samples[0].tokens.slice(0, P),
    rows,
    length,
    inputIds,
    targetIds,
    mask,
    advantages,
    samplingLogprobs,
    sequenceLengths,
    positions,
    segmentIds,
    placements,
    computedTokens,
    sampleTokens,
  };
}

/** Per-sample values at the trained targets (e.g. new logprobs), in target order, from a [rows·length] array. */
export function sampleTargetValues(layout: RlLayout, samples: readonly LayoutSample[], values: ArrayLike<number>): number[][] {
  const P = layout.prefix.length;
  return samples.map((s, i) => {
    const { row, start, inputs } = layout.placements[i];
    const out: number[] = [];
    for (let j = 0; j < inputs; j++) if (s.lossMask[P + j + 1]) out.push(values[row * layout.length + start + j]);
    return out;
  });
}

/**
 * Keeps a run's batch shapes stable: the shared prefix never grows past the first batch's (a longer
 * one would be a new shape), and the row length only grows. jit then compiles once per row count.
 */
export class LayoutShapes {
  private maxPrefix = Infinity;
  private length = 0;

  constructor(private readonly options: Omit<LayoutOptions, 'maxPrefix'> = {}) {}

  layout(samples: readonly LayoutSample[]): RlLayout {
    const layout = buildRlLayout(samples, {
      ...this.options,
      maxPrefix: this.maxPrefix,
      minLength: Math.max(this.length, this.options.minLength ?? 64),
    });
    this.maxPrefix = layout.prefix.length;
    this.length = layout.length;
    return layout;
  }
}

/**
 * Training samples (TrainingSample: tokens, loss mask, advantages, sampling logprobs, aligned as
 * targets) → the plain arrays of one optimiser step, laid out for the shared-prefix forward
 * (rl-batch-forward.ts):
 *
 * - The longest token prefix every sample shares (the system prompt and tool descriptions, several
 *   hundred tokens) is computed ONCE per batch and attended to by every row; each row holds only
 *   what follows it. Exactly the same logprobs as the full sequences (causal attention), at a
 *   fraction of the cost: the per-sample part is ~40 tokens where the prompt is ~450.
 * - Several sequences share a row (first fit), each seeing the prefix and its own past; samples with
 *   the same prompt (a dense env's answers to one decision) share it in the row too: the prompt is
 *   one segment and each answer's segment sees it whole.
 * - Layouts have a fixed row length and a row count from a short list (full, or the last layout's
 *   rows rounded up to `rowMultiple`), so jit compiles a handful of times per run instead of once
 *   per step; a batch takes as many layouts as it needs (the trainer steps the optimiser once per
 *   layout). Bounded rows also bound the attention's memory (rows × length × (prefix + length)),
 *   which wasm caps at 4 GiB.
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
  /**
   * Per target token: 1 where the token is a supervised target (trained by likelihood beside the RL
   * term, e.g. the oracle's report answers; report-sft-samples.ts); absent: none. A supervised-only
   * sample has lossMask 0 everywhere, so it adds nothing to the RL term.
   */
  sftMask?: readonly number[];
  /**
   * How many identical samples this one stands for (samples-merge.ts): its tokens count this many
   * times in the loss's normalisation and metrics (RlLayout.tokenWeights). Absent: 1.
   */
  weight?: number;
  /**
   * Written by the trainer, not sampled (train/explored-answers.ts): `logprobs` are placeholders, and
   * the loss anchors the ratio on the trained policy itself and leaves the tokens out of the KL.
   */
  explored?: boolean;
}

export interface LayoutOptions {
  /** Rows of a full layout; the samples fill as many layouts as they need. */
  rows: number;
  /**
   * The last layout of a batch takes only the rows it uses, rounded up to a multiple of this
   * (default `rows`: every layout has exactly `rows` rows). A few row counts mean a few compiles,
   * and a half-empty batch no longer computes a full one's padding (measured on Blackjack: with 2
   * mini-batches each update filled 44 % of 32 rows).
   */
  rowMultiple?: number;
  /** Shortest row length (default 64); rows grow to the longest sequence, rounded up to `lengthMultiple`. */
  minLength?: number;
  /** Row length is rounded up to a multiple of this (default 32). */
  lengthMultiple?: number;
  /** Largest shared prefix to use (the trainer keeps it stable across steps); default: no cap. */
  maxPrefix?: number;
  /**
   * The shared prefix is cut down to a multiple of this (default 8): jax-js's Wasm matmuls lose
   * their SIMD tiling on odd sizes (measured: prefix 389 → 12.0 s a step, 384 or 392 → 2.5 s).
   */
  prefixMultiple?: number;
  padId?: number;
  /**
   * Samples whose prompts are one conversation's (a prompt that begins a longer one: a later decision
   * of the same episode) share a trunk, each seeing it up to its own prompt's end (layoutUnits);
   * false (the default): only samples with the very same prompt share one.
   */
  shareConversations?: boolean;
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
  /** [rows·length] 1 where the target is a supervised one (LayoutSample.sftMask); present only when some sample of the layout has one. */
  sftMask?: Float32Array;
  /** [rows·length] 1 on the trained targets of explored samples (LayoutSample.explored); present only when the layout has one. */
  explored?: Float32Array;
  /** [rows·length] trained tokens of the position's sequence (for per-sequence length normalisation), unweighted. */
  sequenceLengths: Float32Array;
  /** [rows·length] the weight of the position's sample (LayoutSample.weight, 1 when absent); 0 on padding. */
  tokenWeights: Float32Array;
  /** [rows·length] RoPE position: P + index within the sequence (continues past a row's end for padding). */
  positions: Int32Array;
  /** [rows·length] which sequence of its row a position belongs to; -1 for padding. */
  segmentIds: Int32Array;
  /** [rows·length] the segment of the shared prompt (trunk) a member position also sees; -1 for none. */
  trunkSegments: Int32Array;
  /**
   * [rows·length] the row position up to which (exclusive) a member position sees its trunk: the end
   * of the member's own prompt inside it (a trunk may hold a longer prompt that continues it: a later
   * decision of the same conversation); 0 for none.
   */
  trunkEnds: Int32Array;
  /**
   * Where each sample of this layout went (`sample`: its index in the list given): `inputs` positions
   * from `start`, holding its tokens from index `from` (P, or its shared prompt's last token).
   */
  placements: { sample: number; row: number; start: number; inputs: number; from: number }[];
  /**
   * The row positions (row·length + t) whose target is trained (mask or sftMask), in row order: the
   * forward computes the LM head and its softmax only there (rl-batch-forward.ts). In Blackjack
   * they are the 7-token answers, a small share of the positions beside the observations and padding.
   */
  targetPositions: Int32Array;
  /**
   * The slots the per-target arrays are gathered into: targetPositions.length rounded up to a quarter
   * of rows·length, so a run's layouts of one row count take at most four slot counts (one compile each).
   */
  targetSlots: number;
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
    for (const m of [s.lossMask, s.sftMask ?? []]) {
      const firstTrained = m.indexOf(1);
      if (firstTrained !== -1) n = Math.min(n, firstTrained - 1);
    }
  }
  return Math.max(0, n);
}

function roundUp(x: number, multiple: number): number {
  return Math.ceil(x / multiple) * multiple;
}

/** A sample's first trained target (loss or supervised), or its length when it has none. */
function firstTarget(s: LayoutSample): number {
  let first = s.tokens.length;
  for (const m of [s.lossMask, s.sftMask ?? []]) {
    const i = m.indexOf(1);
    if (i !== -1 && i < first) first = i;
  }
  return first;
}

/**
 * What a row holds for some samples: optionally a trunk segment, inputs [P, trunk.end) of `trunk`'s
 * tokens, then one segment per member with its inputs [from, length − 1). A member sees the trunk's
 * inputs [P, from): its own prompt, which the trunk's holds whole or continues (a later decision of
 * the same conversation), so samples whose prompts are one conversation's compute it once (a dense
 * env's decision samples, all of an episode's decisions, a group's first answers); a plain sample is
 * a unit of one member from P.
 */
type Unit = { trunk: { sample: number; end: number } | null; members: { sample: number; from: number }[]; size: number };

/** A trunk must save at least this many row positions to be shared. */
const MIN_TRUNK = 8;

/** Samples with the same prompt: tokens [0, end] (their first trained target is end + 1). */
type PromptGroup = { end: number; members: number[] };

/**
 * Units of `samples` in the order given. Samples whose tokens before their first trained target (their
 * prompt) are the same form a prompt group; with shareConversations, a group whose prompt (up to
 * its last token) begins a longer group's prompt joins that group's chain; a chain fills units of at most `length` positions
 * in the order of its prompts, each unit's trunk the longest prompt it holds (more go to further
 * units, which repeat the start of the conversation).
 */
function layoutUnits(samples: readonly LayoutSample[], P: number, length: number, shareConversations: boolean): Unit[] {
  const inputsFrom = (i: number, from: number) => samples[i].tokens.length - 1 - from;
  const byPrompt = new Map<string, PromptGroup>();
  const order: (number | PromptGroup)[] = [];
  samples.forEach((s, i) => {
    const end = firstTarget(s) - 1; // the prompt's last token is the first member input
    if (end - P < MIN_TRUNK) return void order.push(i);
    const key = s.tokens.slice(P, end + 1).join(',');
    const group = byPrompt.get(key);
    if (group) group.members.push(i);
    else {
      const created = { end, members: [i] };
      byPrompt.set(key, created);
      order.push(created);
    }
  });
  // Chains, longest prompt first: a group joins the first chain whose head's prompt it begins.
  const chainOf = new Map<PromptGroup, PromptGroup[]>();
  const heads: PromptGroup[][] = [];
  const begins = (head: PromptGroup, g: PromptGroup): boolean => {
    const a = samples[head.members[0]].tokens;
    const b = samples[g.members[0]].tokens;
    for (let t = P; t < g.end; t++) if (a[t] !== b[t]) return false;
    return true;
  };
  for (const g of [...byPrompt.values()].sort((x, y) => y.end - x.end)) {
    const chain = (shareConversations ? heads.find((c) => begins(c[0], g)) : undefined) ?? heads[heads.push([]) - 1];
    chain.push(g);
    chainOf.set(g, chain);
  }
  const units: Unit[] = [];
  const done = new Set<PromptGroup[]>();
  for (const entry of order) {
    if (typeof entry === 'number') {
      units.push({ trunk: null, members: [{ sample: entry, from: P }], size: inputsFrom(entry, P) });
      continue;
    }
    const chain = chainOf.get(entry)!;
    if (done.has(chain)) continue;
    done.add(chain);
    const only = chain.length === 1 && chain[0].members.length === 1 ? chain[0].members[0] : null;
    if (only !== null) {
      units.push({ trunk: null, members: [{ sample: only, from: P }], size: inputsFrom(only, P) });
      continue;
    }
    let unit: Unit | null = null;
    for (const g of [...chain].sort((x, y) => x.end - y.end)) {
      for (const i of g.members) {
        const need = inputsFrom(i, g.end);
        const grow = unit ? Math.max(0, g.end - unit.trunk!.end) : 0;
        if (!unit || unit.size + grow + need > length) {
          unit = { trunk: { sample: i, end: g.end }, members: [], size: g.end - P };
          units.push(unit);
        } else if (grow > 0) {
          unit.trunk = { sample: i, end: g.end }; // its tokens hold every earlier prompt of the chain
          unit.size += grow;
        }
        unit.members.push({ sample: i, from: g.end });
        unit.size += need;
      }
    }
  }
  return units;
}

/**
 * The samples packed into layouts of `rows` rows: each unit (layoutUnits: a sample, or samples
 * sharing their prompt) goes to the first row of the current layout with room (a new row while there
 * are fewer than `rows`), else it starts the next layout. The last layout keeps the rows it uses
 * rounded up to `rowMultiple`. All layouts share the prefix and the row length.
 */
export function buildRlLayouts(samples: readonly LayoutSample[], options: LayoutOptions): RlLayout[] {
  if (samples.length === 0) throw new Error('buildRlLayouts: no samples');
  if (!(Number.isInteger(options.rows) && options.rows >= 1)) throw new Error(`buildRlLayouts: rows must be a positive integer, got ${options.rows}`);
  const rowMultiple = options.rowMultiple ?? options.rows;
  if (!(Number.isInteger(rowMultiple) && rowMultiple >= 1)) throw new Error(`buildRlLayouts: rowMultiple must be a positive integer, got ${rowMultiple}`);
  samples.forEach((s, i) => {
    if (s.lossMask.length !== s.tokens.length) throw new Error(`buildRlLayouts: sample ${i} has ${s.tokens.length} tokens but ${s.lossMask.length} mask values`);
    if (s.sftMask && s.sftMask.length !== s.tokens.length) throw new Error(`buildRlLayouts: sample ${i} has ${s.tokens.length} tokens but ${s.sftMask.length} sftMask values`);
    if (s.tokens.length < 2) throw new Error(`buildRlLayouts: sample ${i} has fewer than 2 tokens`);
    if (s.weight !== undefined && !(Number.isFinite(s.weight) && s.weight > 0)) throw new Error(`buildRlLayouts: sample ${i} has weight ${s.weight}; it must be a positive number`);
  });
  const prefixMultiple = options.prefixMultiple ?? 8;
  const P = Math.floor(sharedPrefixLength(samples, options.maxPrefix) / prefixMultiple) * prefixMultiple;
  const longest = Math.max(...samples.map((s) => s.tokens.length - 1 - P));
  const length = Math.max(options.minLength ?? 64, roundUp(longest, options.lengthMultiple ?? 32));

  const layouts: RlLayout[] = [];
  let placed: { unit: Unit; row: number; start: number }[] = [];
  let free: number[] = [];
  const close = () => {
    const rows = Math.min(options.rows, roundUp(free.length, rowMultiple));
    layouts.push(fillLayout(samples, placed, rows, length, P, options.padId ?? 0));
    placed = [];
    free = [];
  };
  for (const unit of layoutUnits(samples, P, length, options.shareConversations ?? false)) {
    let r = free.findIndex((f) => f >= unit.size);
    if (r === -1 && free.length === options.rows) close();
    if (r === -1) {
      r = free.length;
      free.push(length);
    }
    placed.push({ unit, row: r, start: length - free[r] });
    free[r] -= unit.size;
  }
  close();
  return layouts;
}

/** The arrays of one layout holding the `placed` units at their rows and starts. */
function fillLayout(samples: readonly LayoutSample[], placed: readonly { unit: Unit; row: number; start: number }[], rows: number, length: number, P: number, padId: number): RlLayout {
  const size = rows * length;
  const inputIds = new Int32Array(size).fill(padId);
  const targetIds = new Int32Array(size).fill(padId);
  const mask = new Float32Array(size);
  const advantages = new Float32Array(size);
  const samplingLogprobs = new Float32Array(size);
  const sequenceLengths = new Float32Array(size);
  const tokenWeights = new Float32Array(size);
  const sftMask = placed.some(({ unit }) => unit.members.some((m) => samples[m.sample].sftMask?.includes(1))) ? new Float32Array(size) : undefined;
  const explored = placed.some(({ unit }) => unit.members.some((m) => samples[m.sample].explored)) ? new Float32Array(size) : undefined;
  const positions = new Int32Array(size);
  const segmentIds = new Int32Array(size).fill(-1);
  const trunkSegments = new Int32Array(size).fill(-1);
  const trunkEnds = new Int32Array(size);
  for (let r = 0; r < rows; r++) for (let t = 0; t < length; t++) positions[r * length + t] = P + t;

  const segmentsInRow = new Array<number>(rows).fill(0);
  const placements: RlLayout['placements'] = [];
  let computedTokens = P;
  let sampleTokens = 0;
  for (const { unit, row, start } of placed) {
    let at = row * length + start;
    let trunk = -1;
    if (unit.trunk) {
      // The shared prompt: inputs and (untrained) targets of its tokens, from row position `start`; each
      // member's segment sees it up to the end of its own prompt.
      const s = samples[unit.trunk.sample];
      trunk = segmentsInRow[row]++;
      for (let i = P; i < unit.trunk.end; i++, at++) {
        inputIds[at] = s.tokens[i];
        targetIds[at] = s.tokens[i + 1];
        positions[at] = i;
        segmentIds[at] = trunk;
      }
      computedTokens += unit.trunk.end - P;
    }
    for (const { sample, from } of unit.members) {
      const s = samples[sample];
      const segment = segmentsInRow[row]++;
      const inputs = s.tokens.length - 1 - from;
      const weight = s.weight ?? 1;
      const trunkEnd = trunk === -1 ? 0 : start + (from - P); // the trunk's inputs [P, from)
      let trained = 0;
      for (let j = 1; j <= inputs; j++) trained += s.lossMask[from + j] ? 1 : 0;
      placements.push({ sample, row, start: at - row * length, inputs, from });
      for (let j = 0; j < inputs; j++, at++) {
        const target = from + j + 1;
        inputIds[at] = s.tokens[from + j];
        targetIds[at] = s.tokens[target];
        const m = s.lossMask[target] ? 1 : 0;
        mask[at] = m;
        advantages[at] = m ? (s.advantages?.[target] ?? 0) : 0;
        samplingLogprobs[at] = m ? (s.logprobs?.[target] ?? 0) : 0;
        if (sftMask) sftMask[at] = s.sftMask?.[target] ? 1 : 0;
        if (explored) explored[at] = m && s.explored ? 1 : 0;
        sequenceLengths[at] = trained;
        tokenWeights[at] = weight;
        positions[at] = from + j;
        segmentIds[at] = segment;
        trunkSegments[at] = trunk;
        trunkEnds[at] = trunkEnd;
      }
      computedTokens += inputs;
      sampleTokens += s.tokens.length;
    }
  }
  const targets: number[] = [];
  for (let i = 0; i < size; i++) if (mask[i] === 1 || sftMask?.[i] === 1) targets.push(i);
  const targetPositions = Int32Array.from(targets);
  const slotStep = Math.max(1, Math.ceil(size / 4));
  return {
    prefix: samples[0].tokens.slice(0, P),
    rows,
    length,
    inputIds,
    targetIds,
    mask,
    advantages,
    samplingLogprobs,
    ...(sftMask ? { sftMask } : {}),
    ...(explored ? { explored } : {}),
    sequenceLengths,
    tokenWeights,
    positions,
    segmentIds,
    trunkSegments,
    trunkEnds,
    placements,
    targetPositions,
    targetSlots: Math.min(size, roundUp(Math.max(1, targetPositions.length), slotStep)),
    computedTokens,
    sampleTokens,
  };
}

/**
 * Per-sample values at the trained targets (e.g. new logprobs) of this layout's samples, from an
 * array over its target slots (what rlLogprobs returns: slot k is row position targetPositions[k]).
 */
export function sampleTargetValues(layout: RlLayout, samples: readonly LayoutSample[], values: ArrayLike<number>): Map<number, number[]> {
  const slotOf = new Map<number, number>();
  layout.targetPositions.forEach((position, slot) => slotOf.set(position, slot));
  const out = new Map<number, number[]>();
  for (const { sample, row, start, inputs, from } of layout.placements) {
    const s = samples[sample];
    const v: number[] = [];
    for (let j = 0; j < inputs; j++) if (s.lossMask[from + j + 1]) v.push(values[slotOf.get(row * layout.length + start + j)!]);
    out.set(sample, v);
  }
  return out;
}

/**
 * Positions of a full layout when the rows are left to the row length: 16 rows of 128 (Blackjack's
 * measured shape). A 10-pull bandit episode needs ~670-token rows, and 16 of them ran out of Wasm's
 * 4 GiB at the first warm-start step; 3 rows of 672 hold the same tokens.
 */
export const TOKENS_PER_LAYOUT = 2048;

/**
 * The batch shapes of a whole run: `length` row positions behind a shared prefix that never grows
 * past the first batch's, and `rows` rows (or fewer, in steps of `rowMultiple`, for a batch's last
 * layout). jax-js compiles once per shape, and its Wasm allocator keeps a free list per buffer size
 * (memory is never returned), so every new shape costs a compile AND a fresh set of buffers against
 * the 4 GiB cap: the trainer must not let shapes drift. A sequence longer than a row cannot be
 * trained in this shape; it is left out and counted.
 */
export class LayoutShapes {
  private maxPrefix = Infinity;
  private rowLength: number | null;

  /**
   * `length` null: set later with fixLength (measured from the data) and before the first layout.
   * `rows` null: as many rows as TOKENS_PER_LAYOUT fills at the row length.
   */
  constructor(private readonly options: Omit<LayoutOptions, 'maxPrefix' | 'minLength' | 'rows'> & { rows: number | null; length: number | null }) {
    this.rowLength = options.length;
  }

  /** Rows of a full layout (NaN until the length is fixed, when they follow from it). */
  get rows(): number {
    if (this.options.rows !== null) return this.options.rows;
    return this.rowLength === null ? NaN : Math.max(1, Math.floor(TOKENS_PER_LAYOUT / this.rowLength));
  }

  /** The prefix length fixed so far (Infinity before the first batch). */
  get prefixLength(): number {
    return this.maxPrefix;
  }

  /** The row length (NaN until fixed). */
  get length(): number {
    return this.rowLength ?? NaN;
  }

  get lengthFixed(): boolean {
    return this.rowLength !== null;
  }

  /** Sets the row length once (a run keeps one shape); a second, different length is an error. */
  fixLength(length: number): void {
    if (!(Number.isInteger(length) && length >= 1)) throw new Error(`LayoutShapes: row length must be a positive integer, got ${length}`);
    if (this.rowLength !== null && this.rowLength !== length) throw new Error(`LayoutShapes: the row length is already ${this.rowLength}`);
    this.rowLength = length;
  }

  /** Restores the prefix length a resumed run had fixed. */
  fixPrefix(length: number): void {
    this.maxPrefix = length;
  }

  /** The shared prefix these samples would be laid out behind. */
  private prefixOf(samples: readonly LayoutSample[]): number {
    const prefixMultiple = this.options.prefixMultiple ?? 8;
    return Math.floor(sharedPrefixLength(samples, this.maxPrefix) / prefixMultiple) * prefixMultiple;
  }

  /** The most tokens a sequence may have and fit a row behind the prefix `samples` share (any subset of them shares at least as much). */
  fittingTokens(samples: readonly LayoutSample[]): number {
    if (this.rowLength === null) throw new Error('LayoutShapes: the row length is not fixed yet');
    return this.prefixOf(samples) + this.rowLength + 1;
  }

  layouts(samples: readonly LayoutSample[]): { layouts: RlLayout[]; tooLong: number } {
    const P = this.prefixOf(samples);
    const length = this.rowLength;
    if (length === null) throw new Error('LayoutShapes: the row length is not fixed yet');
    const fits = samples.filter((s) => s.tokens.length - 1 - P <= length);
    if (fits.length === 0) return { layouts: [], tooLong: samples.length };
    this.maxPrefix = P;
    const layouts = buildRlLayouts(fits, { ...this.options, rows: this.rows, maxPrefix: P, minLength: length, lengthMultiple: 1 });
    return { layouts, tooLong: samples.length - fits.length };
  }
}

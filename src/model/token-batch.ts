/**
 * Turns (prompt ids, completion ids) pairs into the plain arrays one training forward reads:
 * next-token inputs and targets, a mask on the completion's targets, and (when several sequences
 * share a row) positions and segment ids. Plain data; the engine is not involved.
 */

export type SequenceSample = { promptIds: readonly number[]; completionIds: readonly number[] };

export type TokenBatch = {
  batch: number;
  length: number;
  /** [B*T] input token at each position (right-padded with padId). */
  inputIds: Int32Array;
  /** [B*T] the token that follows inputIds[t] in its sequence (padId where there is none). */
  targetIds: Int32Array;
  /** [B*T] 1 where targetIds[t] is a completion token (the loss is taken there), else 0. */
  mask: Float32Array;
  /** [B*T] RoPE position of each input token (0-based within its own sequence). */
  positions: Int32Array;
  /** [B*T] which sequence of the row a position belongs to; null when every row holds one sequence. */
  segmentIds: Int32Array | null;
  /** Where each sample landed: row, first position of its sequence, and prompt length. */
  placements: { row: number; start: number; promptLength: number; completionLength: number }[];
};

export type TokenBatchOptions = {
  padId?: number;
  /** Row length; default the longest sequence minus one (rounded up to `multipleOf`). */
  length?: number;
  multipleOf?: number;
  /** Pack several sequences per row (block-diagonal causal attention) instead of one per row. */
  pack?: boolean;
  /**
   * Pad the batch with empty rows (mask 0) up to this many. jit compiles once per input shape, so
   * a trainer that fixes `rows` and rounds `length` up (`multipleOf`) compiles a handful of times.
   */
  rows?: number;
};

function sequenceLength(s: SequenceSample): number {
  return s.promptIds.length + s.completionIds.length;
}

function validate(samples: readonly SequenceSample[]): void {
  if (samples.length === 0) throw new Error('buildTokenBatch: no samples');
  samples.forEach((s, i) => {
    if (s.promptIds.length === 0) throw new Error(`buildTokenBatch: sample ${i} has an empty prompt (the first completion token needs a context)`);
    if (s.completionIds.length === 0) throw new Error(`buildTokenBatch: sample ${i} has an empty completion`);
    for (const id of [...s.promptIds, ...s.completionIds]) {
      if (!Number.isInteger(id) || id < 0) throw new Error(`buildTokenBatch: sample ${i} has token id ${id}, not a non-negative integer`);
    }
  });
}

/**
 * One sequence of P + C tokens predicts C completion tokens from P + C - 1 input positions:
 * position t reads token t and is scored on token t + 1, so completion token j of a sample sits at
 * position start + promptLength - 1 + j.
 */
export function buildTokenBatch(samples: readonly SequenceSample[], options: TokenBatchOptions = {}): TokenBatch {
  validate(samples);
  const padId = options.padId ?? 0;
  const multiple = options.multipleOf ?? 1;
  const longest = Math.max(...samples.map(sequenceLength)) - 1;
  const length = options.length ?? Math.ceil(longest / multiple) * multiple;
  if (longest > length) throw new Error(`buildTokenBatch: a sequence needs ${longest} positions but rows have length ${length}`);

  // Rows: one sample each, or first-fit-decreasing packing.
  const rows: number[][] = [];
  if (options.pack) {
    const free: number[] = [];
    const order = samples.map((_, i) => i).sort((a, b) => sequenceLength(samples[b]) - sequenceLength(samples[a]));
    for (const i of order) {
      const need = sequenceLength(samples[i]) - 1;
      let r = free.findIndex((f) => f >= need);
      if (r === -1) {
        r = rows.length;
        rows.push([]);
        free.push(length);
      }
      rows[r].push(i);
      free[r] -= need;
    }
  } else {
    samples.forEach((_, i) => rows.push([i]));
  }

  if (options.rows !== undefined) {
    if (rows.length > options.rows) throw new Error(`buildTokenBatch: the samples need ${rows.length} rows, more than rows ${options.rows}`);
    while (rows.length < options.rows) rows.push([]);
  }
  const batch = rows.length;
  const inputIds = new Int32Array(batch * length).fill(padId);
  const targetIds = new Int32Array(batch * length).fill(padId);
  const mask = new Float32Array(batch * length);
  const positions = new Int32Array(batch * length);
  const segmentIds = options.pack ? new Int32Array(batch * length).fill(-1) : null;
  const placements: TokenBatch['placements'] = new Array(samples.length);

  rows.forEach((members, row) => {
    let start = 0;
    members.forEach((i, segment) => {
      const s = samples[i];
      const seq = [...s.promptIds, ...s.completionIds];
      for (let t = 0; t < seq.length - 1; t++) {
        const at = row * length + start + t;
        inputIds[at] = seq[t];
        targetIds[at] = seq[t + 1];
        mask[at] = t + 1 >= s.promptIds.length ? 1 : 0;
        positions[at] = t;
        if (segmentIds) segmentIds[at] = segment;
      }
      placements[i] = { row, start, promptLength: s.promptIds.length, completionLength: s.completionIds.length };
      start += seq.length - 1;
    });
    // Padding continues the positions, so unpacked rows share one position table.
    for (let t = start; t < length; t++) positions[row * length + t] = t;
  });
  return { batch, length, inputIds, targetIds, mask, positions, segmentIds, placements };
}

/** Per-sample completion values (logprobs, entropies) out of a [B*T] array laid out like `batch`. */
export function completionValues(batch: TokenBatch, values: ArrayLike<number>): number[][] {
  return batch.placements.map((p) => {
    const first = p.row * batch.length + p.start + p.promptLength - 1;
    return Array.from({ length: p.completionLength }, (_, j) => values[first + j]);
  });
}

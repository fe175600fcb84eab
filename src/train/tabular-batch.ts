/**
 * From recorded trajectories and their advantages to the tabular trainer's batch: one row per
 * policy call, read from what the call recorded (state row, action column, sampling logprob), never
 * recomputed (DESIGN rule 1). Each row is a one-token sequence, so the loss sees [B, 1] tensors.
 */
import type { Trajectory } from '../core/trajectory.ts';
import type { TrajectoryAdvantages } from '../advantage/types.ts';
import { np, type Tensor } from '../model/engine.ts';

export interface TabularDecisions {
  states: number[];
  actions: number[];
  samplingLogprobs: number[];
  advantages: number[];
}

/** The tensors of a batch, padded to `rows` with masked rows (a fixed shape compiles once). */
export type TabularBatchTensors = {
  states: Tensor; // [B] int32
  actions: Tensor; // [B] int32
  samplingLogprobs: Tensor; // [B, 1]
  advantages: Tensor; // [B, 1]
  mask: Tensor; // [B, 1]
  /** log π_ref(a | s) of the frozen reference table, present when the loss has a KL term. */
  refLogprobs?: Tensor; // [B, 1]
  /** β of this step (a schedule), a scalar input so jit does not recompile. */
  klBeta?: Tensor;
};

/**
 * Every call of every trajectory that has advantages, with its turn's advantage. A call without the
 * tabular policy's ids (another policy's, or a failed call) is an error: the control trains on
 * exactly what it sampled or not at all.
 */
export function tabularDecisions(trajectories: readonly Trajectory[], advantages: readonly TrajectoryAdvantages[]): TabularDecisions {
  const byId = new Map(advantages.map((a) => [a.trajectoryId, a.turnAdvantages]));
  const out: TabularDecisions = { states: [], actions: [], samplingLogprobs: [], advantages: [] };
  for (const t of trajectories) {
    const turnAdvantages = byId.get(t.id);
    if (!turnAdvantages) continue; // dropped (e.g. a zero-variance group)
    if (turnAdvantages.length !== t.turns.length) {
      throw new Error(`trajectory ${t.id}: ${t.turns.length} turns but ${turnAdvantages.length} advantages`);
    }
    t.turns.forEach((turn, k) => {
      for (const call of turn.calls) {
        const c = call.completion;
        const state = c.promptTokenIds?.[0];
        const action = c.completionTokenIds?.[0];
        const logprob = c.logprobs?.[0];
        if (state === undefined || action === undefined || logprob === undefined || !Number.isFinite(logprob)) {
          throw new Error(`trajectory ${t.id} turn ${k}: the call has no tabular state/action/logprob (policy ${c.modelId})`);
        }
        out.states.push(state);
        out.actions.push(action);
        out.samplingLogprobs.push(logprob);
        out.advantages.push(turnAdvantages[k]);
      }
    });
  }
  return out;
}

/** Rows rounded up to a multiple of `multiple`, so a run compiles few shapes. */
export function paddedRows(count: number, multiple: number): number {
  return Math.max(multiple, Math.ceil(count / multiple) * multiple);
}

/**
 * `reference`: the frozen reference table's log-probabilities [states × actions], row-major, when the
 * loss has a KL term; each row then carries log π_ref of its own state and action.
 */
export function tabularBatchTensors(
  d: TabularDecisions,
  rows: number,
  reference?: { logprobs: Float32Array; actions: number; klBeta: number },
): TabularBatchTensors {
  const n = d.states.length;
  if (rows < n) throw new Error(`tabular batch: ${n} decisions do not fit in ${rows} rows`);
  const ints = (values: number[]): Int32Array => {
    const out = new Int32Array(rows);
    out.set(values);
    return out;
  };
  const floats = (values: number[]): Float32Array => {
    const out = new Float32Array(rows);
    out.set(values);
    return out;
  };
  const mask = new Float32Array(rows).fill(1, 0, n);
  return {
    states: np.array(ints(d.states), { dtype: np.int32 }),
    actions: np.array(ints(d.actions), { dtype: np.int32 }),
    samplingLogprobs: np.array(floats(d.samplingLogprobs)).reshape([rows, 1]),
    advantages: np.array(floats(d.advantages)).reshape([rows, 1]),
    mask: np.array(mask).reshape([rows, 1]),
    ...(reference
      ? {
          refLogprobs: np.array(floats(d.states.map((s, i) => reference.logprobs[s * reference.actions + d.actions[i]]))).reshape([rows, 1]),
          klBeta: np.array(reference.klBeta),
        }
      : {}),
  };
}

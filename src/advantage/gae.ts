/**
 * GAE over turns (DESIGN rule 4). Each turn t of an episode is one decision with reward r_t:
 *
 *   δ_t = r_t + γ V_{t+1} − V_t                     (TD error; V_T = 0 after the last turn)
 *   A_t = Σ_{l≥0} (γλ)^l δ_{t+l} = δ_t + γλ A_{t+1}
 *
 * V must not be the trajectory's own return-to-go: with V_t = G_t every δ_t is 0 and so is every
 * advantage (the bug in seed 000). V comes from a value that did not see this trajectory's
 * future alone: by default the per-turn-index baseline b_k = mean return-to-go at turn k over
 * the batch (`turnIndexBaseline`), or an array per trajectory from a value head.
 * With γ = λ = 1 and V = b the sum telescopes: A_t = G_t − b_t, return minus baseline.
 * Defaults are γ = λ = 1 for that reason: with a state-blind baseline, λ < 1 would mix in
 * bootstraps from a V that is not a state value.
 * A turn index that only one trajectory of the batch reaches has b_k = that trajectory's G_k,
 * so its advantage there is 0: nothing else in the batch to compare it with.
 */
import { z } from 'zod';
import type { ScoredGroup, TrajectoryAdvantages } from './types.ts';
import { turnRewardsOf } from './types.ts';
import { checkScoredGroups, parseOptions } from './validate.ts';

const unit = z.number().min(0, 'must be in [0, 1]').max(1, 'must be in [0, 1]');
export const gaeOptionsSchema = z.strictObject({ gamma: unit.default(1), lambda: unit.default(1) });
export type GaeOptions = z.input<typeof gaeOptionsSchema>;

/** Value estimates by trajectory id: one per turn, or one more for the state after the last turn (truncated episodes). */
export type TurnValues = Readonly<Record<string, readonly number[]>>;

/** G_t = r_t + γ G_{t+1}, G_T = 0. */
export function returnsToGo(rewards: readonly number[], gamma: number): number[] {
  const G = new Array<number>(rewards.length);
  let next = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    next = rewards[t] + gamma * next;
    G[t] = next;
  }
  return G;
}

/** b_k = mean of G_{i,k} over the trajectories i of the batch that reach turn k. */
export function turnIndexBaseline(groups: readonly ScoredGroup[], gamma: number): number[] {
  const sum: number[] = [];
  const count: number[] = [];
  for (const group of groups) {
    for (const sample of group.samples) {
      returnsToGo(turnRewardsOf(sample), gamma).forEach((g, k) => {
        sum[k] = (sum[k] ?? 0) + g;
        count[k] = (count[k] ?? 0) + 1;
      });
    }
  }
  return sum.map((s, k) => s / count[k]);
}

/** GAE of one episode. `values` has T entries (V_T = 0) or T + 1 (V_T given, to bootstrap a cut-off episode). */
export function gae(rewards: readonly number[], values: readonly number[], gamma: number, lambda: number): number[] {
  const T = rewards.length;
  const A = new Array<number>(T);
  let next = 0; // A_{t+1}
  for (let t = T - 1; t >= 0; t--) {
    const vNext = t + 1 < values.length ? values[t + 1] : 0;
    const delta = rewards[t] + gamma * vNext - values[t]; // δ_t = r_t + γ V_{t+1} − V_t
    next = delta + gamma * lambda * next; // A_t = δ_t + γλ A_{t+1}
    A[t] = next;
  }
  return A;
}

/**
 * Per-turn GAE for every trajectory of the batch. Without `values`, V is the batch's
 * per-turn-index baseline; with them, every trajectory needs an entry.
 */
export function gaeAdvantages(
  groups: readonly ScoredGroup[],
  options: GaeOptions = {},
  values?: TurnValues,
): TrajectoryAdvantages[] {
  checkScoredGroups(groups);
  const { gamma, lambda } = parseOptions(gaeOptionsSchema, options, 'gae');
  let valuesOf: (trajectoryId: string, turns: number) => readonly number[];
  if (values) {
    valuesOf = (id, turns) => checkedValues(values, id, turns);
  } else {
    const baseline = turnIndexBaseline(groups, gamma);
    valuesOf = (_id, turns) => baseline.slice(0, turns);
  }
  return groups.flatMap((group) =>
    group.samples.map((sample) => {
      const rewards = turnRewardsOf(sample);
      const V = valuesOf(sample.trajectoryId, rewards.length);
      return {
        trajectoryId: sample.trajectoryId,
        groupId: group.groupId,
        turnAdvantages: gae(rewards, V, gamma, lambda),
      };
    }),
  );
}

function checkedValues(values: TurnValues, id: string, turns: number): readonly number[] {
  const v = values[id];
  const field = `advantage input: values['${id}']`;
  if (!Array.isArray(v)) throw new Error(`${field}: missing; give one value per turn for every trajectory`);
  if (v.length !== turns && v.length !== turns + 1) {
    throw new Error(
      `${field}: has ${v.length} values; expected ${turns} (one per turn) or ${turns + 1} (plus the state after the last turn)`,
    );
  }
  const bad = v.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x));
  if (bad >= 0) throw new Error(`${field}.${bad}: must be a finite number, got ${String(v[bad])}`);
  return v;
}

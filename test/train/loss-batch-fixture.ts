import assert from 'node:assert/strict';
import { grad, np, type Tensor } from '../../src/model/engine.ts';
import type { LossSettings } from '../../src/train/loss-config.ts';
import { policyLoss, type PolicyLossInputs } from '../../src/train/loss-rl.ts';

/** A loss tensor's scalar value. */
export async function scalar(t: Tensor): Promise<number> {
  return (await t.data())[0];
}

/** |actual − expected| ≤ tol, with both in the message. */
export function near(actual: number, expected: number, tol: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} vs ${expected}`);
}

/** A two-row loss batch (row 0: two tokens and padding; row 1: three tokens) whose loss loss-aggregate.test.ts works out by hand. */
export const BATCH = {
  mask: [
    [1, 1, 0],
    [1, 1, 1],
  ],
  newLp: [
    [-1.0, -0.5, -7],
    [-2.0, -0.2, -1.2],
  ],
  oldLp: [
    [-1.2, -0.4, 0],
    [-1.5, -0.2, -1.0],
  ],
  samplingLp: [
    [-1.2, -1.3, 0],
    [-2.5, 0.1, -1.5],
  ],
  advantages: [
    [1, -1, 5],
    [-1, 2, 0.5],
  ],
  refLp: [
    [-1.1, -0.5, 3],
    [-2.0, -0.3, -1.0],
  ],
  entropy: [
    [0.5, 1.0, 9],
    [1.5, 0.25, 0.75],
  ],
};

/** Per-token host data of a loss batch [R][T] (newLp is the differentiated input). */
export interface HostBatch {
  newLp: number[][];
  oldLp: number[][];
  samplingLp: number[][];
  advantages: number[][];
  mask: number[][];
  refLp: number[][];
  entropy: number[][];
  sequenceLengths?: number[][];
  tokenWeights?: number[][];
  explored?: number[][];
}

/** policyLoss's inputs from a host batch, with `newLogprobs` as log π_new. */
export function lossInputs(b: HostBatch, newLogprobs: Tensor): PolicyLossInputs {
  return {
    newLogprobs,
    oldLogprobs: np.array(b.oldLp),
    samplingLogprobs: np.array(b.samplingLp),
    advantages: np.array(b.advantages),
    mask: np.array(b.mask),
    refLogprobs: np.array(b.refLp),
    entropy: np.array(b.entropy),
    ...(b.sequenceLengths ? { sequenceLengths: np.array(b.sequenceLengths) } : {}),
    ...(b.tokenWeights ? { tokenWeights: np.array(b.tokenWeights) } : {}),
    ...(b.explored ? { explored: np.array(b.explored) } : {}),
  };
}

/** policyLoss at log π_new = `lp`: the loss, its gradient w.r.t. `lp` (flat) and every metric. */
export async function lossAt(inputsOf: (lp: Tensor) => PolicyLossInputs, lp: number[][], settings: LossSettings) {
  const [loss, metrics] = policyLoss(inputsOf(np.array(lp)), settings);
  const g = grad((x: Tensor) => policyLoss(inputsOf(x), settings)[0])(np.array(lp));
  const values: Record<string, number> = {};
  for (const [name, t] of Object.entries(metrics)) values[name] = await scalar(t);
  return { loss: await scalar(loss), grad: Array.from(await g.data(), Number), metrics: values };
}

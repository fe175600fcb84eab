/**
 * Which env seeds each phase of a run plays. Every range is disjoint from the others, so nothing a
 * run trains on is ever evaluated: evaluation uses seeds 0, 1, 2, ... (the seeds `spindle eval
 * --seed 0` plays, the same for every run), choosing the handed-over policy a validation block apart
 * from them (so the choice is not made on the seeds that then judge it), the warm start's format
 * check a held-out block, and
 * demonstrations and RL rollouts blocks of their own under the run's seed. A step's seeds depend only
 * on (run seed, step), which is what lets a resumed run replay exactly what the original would have.
 */

/** Seeds per run seed; run seeds stay below MAX_RUN_SEED so every env seed is a safe integer. */
const RUN_SPAN = 1_000_000_000;
export const MAX_RUN_SEED = 1_000_000;
const CHECK_BASE = 100_000_000;
const DEMO_BASE = 200_000_000;
const TRAIN_BASE = 300_000_000;
// Shared by every run, as the evaluation seeds are; run seed 0's training block below it would need
// 100,000,000 rollout seeds to reach it.
const VALIDATION_BASE = 400_000_000;

function range(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i);
}

/** Held-out evaluation seeds (shared by every run). */
export function evalSeeds(count: number): number[] {
  return range(0, count);
}

/** Validation seeds: what the candidates for the handed-over policy are compared on (handover-select.ts). */
export function validationSeeds(count: number): number[] {
  return range(VALIDATION_BASE, count);
}

/** Held-out seeds of the warm start's format check. */
export function formatCheckSeeds(count: number): number[] {
  return range(CHECK_BASE, count);
}

export function demoSeeds(runSeed: number, count: number): number[] {
  return range(runSeed * RUN_SPAN + DEMO_BASE, count);
}

/** The `batchSeeds` seeds of RL step `step` (1-based). */
export function stepSeeds(runSeed: number, step: number, batchSeeds: number): number[] {
  return range(runSeed * RUN_SPAN + TRAIN_BASE + (step - 1) * batchSeeds, batchSeeds);
}

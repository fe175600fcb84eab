/**
 * `run:RUN[@STEP]`: a run's checkpoint folder, found through the store's checkpoint records (the latest
 * step when none is given). Every miss is a UsageError that lists what the store does hold.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.ts';
import type { CheckpointRecord } from '../core/trajectory.ts';
import { openStore } from '../store/open.ts';
import { defaultDbPath } from '../store/paths.ts';
import { runIdSchema } from '../store/recordSchemas.ts';
import type { Store } from '../store/store.ts';

export interface RunCheckpointRef {
  runId: string;
  /** null: the latest checkpoint. */
  step: number | null;
}

export interface RunCheckpoint {
  runId: string;
  step: number;
  /** Absolute path of the checkpoint folder. */
  dir: string;
  record: CheckpointRecord;
  /** Every step the run has a checkpoint for, ascending. */
  steps: number[];
}

/** Runs listed in a "no such run" message. */
const RUNS_LISTED = 10;

/** Parses `RUN` or `RUN@STEP` (the text after `run:`); `label` names the flag in errors. */
export function parseRunRef(text: string, label: string): RunCheckpointRef {
  const at = text.lastIndexOf('@');
  const runId = at === -1 ? text : text.slice(0, at);
  const stepText = at === -1 ? null : text.slice(at + 1);
  if (runId.length === 0) throw new UsageError(`${label} run:RUN[@STEP] needs a run id, e.g. run:run_1a2b3c@200 (see spindle runs)`);
  if (!runIdSchema.safeParse(runId).success) throw new UsageError(`${label} run:${text}: '${runId}' is not a run id (see spindle runs)`);
  if (stepText === null) return { runId, step: null };
  if (!/^\d{1,12}$/.test(stepText)) throw new UsageError(`${label} run:${text}: STEP must be a non-negative integer, got '${stepText}'`);
  return { runId, step: Number(stepText) };
}

function stepsText(records: CheckpointRecord[]): string {
  return records.map((r) => r.step).join(', ');
}

/** Runs in the store that have checkpoints, newest first, as `run_x (steps 10, 20)`. */
async function runsWithCheckpoints(store: Store): Promise<string[]> {
  const out: string[] = [];
  for (const run of await store.listRuns({ limit: 200 })) {
    const records = await store.listCheckpoints(run.id);
    if (records.length > 0) out.push(`${run.id} (steps ${stepsText(records)})`);
    if (out.length === RUNS_LISTED) break;
  }
  return out;
}

/** The checkpoint `ref` names in `store`. */
export async function findRunCheckpoint(store: Store, ref: RunCheckpointRef, label: string): Promise<RunCheckpoint> {
  const name = `run:${ref.runId}${ref.step === null ? '' : `@${ref.step}`}`;
  const run = await store.getRun(ref.runId);
  if (!run) {
    const runs = await runsWithCheckpoints(store);
    const known = runs.length > 0 ? `runs with checkpoints: ${runs.join('; ')}` : 'no run in it has checkpoints';
    throw new UsageError(`${label} ${name}: no run '${ref.runId}' in the store; ${known}`);
  }
  const records = await store.listCheckpoints(ref.runId);
  if (records.length === 0) throw new UsageError(`${label} ${name}: run '${ref.runId}' (${run.kind}, ${run.status}) has no checkpoints`);
  const record = ref.step === null ? records[records.length - 1] : records.find((r) => r.step === ref.step);
  if (!record) throw new UsageError(`${label} ${name}: run '${ref.runId}' has no checkpoint at step ${ref.step}; available steps: ${stepsText(records)}`);
  const dir = resolve(store.runDir(ref.runId), record.path);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UsageError(`${label} ${name}: the checkpoint folder of step ${record.step} is missing (${dir})`);
  }
  return { runId: ref.runId, step: record.step, dir, record, steps: records.map((r) => r.step) };
}

/**
 * Opens the store at `db` (default .spindle/spindle.db), finds `run:TEXT`'s checkpoint and closes the
 * store. A database that does not exist is reported, not created.
 */
export async function resolveRunCheckpoint(text: string, db: string | undefined, label: string): Promise<RunCheckpoint> {
  const ref = parseRunRef(text, label);
  const path = resolve(db ?? defaultDbPath());
  if (!existsSync(path)) throw new UsageError(`${label} run:${text}: there is no database at ${path} (pass --db, or train a run first)`);
  const store = await openStore(path);
  try {
    return await findRunCheckpoint(store, ref, label);
  } finally {
    await store.close();
  }
}

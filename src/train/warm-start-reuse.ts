/**
 * Reusing a run's warm start (`spindle train --warm-start RUN`): RL with new settings from the weights
 * another run's warm start left, without repeating it (10–12 minutes for the ten-turn envs on two
 * cores). The trainer writes `warm-start/warm-start.json` beside the warm-started weights: what a
 * later run needs to start where that one's RL started (the env and its options, the answer budget
 * and RL's row length measured from the demonstrations, the warm start's summary). A run started
 * so replays the source run's RL exactly when its settings and seed are the same.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { canonicalJson } from '../core/canonical.ts';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import type { HostParams } from '../model/params.ts';
import { loadModelFolder } from './checkpoint-io.ts';
import type { ModelAssets } from './default-model.ts';
import { warmStartSummarySchema, type WarmStartSummary } from './trainer-state.ts';

export const WARM_START_RECORD_FILE = 'warm-start.json';
const FORMAT = 'spindle-warm-start/1';

const recordSchema = z.object({
  format: z.literal(FORMAT),
  runId: z.string(),
  env: z.string(),
  envOptions: z.record(z.string(), z.unknown()),
  /** Max new tokens per answer the warm start settled (the longest demonstrated answer + 16, or the config's). */
  maxTokens: z.number().int().min(1),
  /** RL's row length measured from the demonstrations (used when the new run's config leaves it open). */
  rowLength: z.number().int().min(1),
  summary: warmStartSummarySchema,
});
export type WarmStartRecord = z.infer<typeof recordSchema>;

/** Writes the record into the warm-start folder `dir`. */
export function saveWarmStartRecord(dir: string, record: Omit<WarmStartRecord, 'format'>): void {
  writeFileSync(join(dir, WARM_START_RECORD_FILE), `${JSON.stringify({ format: FORMAT, ...record }, null, 2)}\n`);
}

/** Weights to begin RL from (another run's warm start or checkpoint): weights, tokenizer and model config, and the source's warm-start record. */
export interface WarmStartSource {
  runId: string;
  /** What the weights are, as the run's warm-start summary names them: `RUN` (its warm start) or `RUN@STEP` (a checkpoint). */
  from: string;
  assets: ModelAssets;
  params: HostParams;
  record: WarmStartRecord;
}

/** The record in warm-start folder `dir`, validated; `label` names the flag in errors. */
function readWarmStartRecord(label: string, dir: string): WarmStartRecord {
  const path = join(dir, WARM_START_RECORD_FILE);
  if (!existsSync(path)) {
    throw new UsageError(`${label}: no ${WARM_START_RECORD_FILE} in ${dir} (the run has not finished its warm start, or it predates warm-start reuse)`);
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  const parsed = recordSchema.safeParse(json);
  if (!parsed.success) throw new UsageError(`${path}: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/**
 * Loads the warm start of run `runId` (folder `dir`) for a run of env `env` with `envOptions`: the
 * warm start saw that env's text with those options, so another env or other options are refused,
 * naming the options that differ.
 */
export function loadWarmStartSource(runId: string, dir: string, env: string, envOptions: Record<string, unknown>): WarmStartSource {
  const record = readWarmStartRecord(`--warm-start ${runId}`, dir);
  if (record.env !== env) throw new UsageError(`--warm-start ${runId}: that run trains env '${record.env}', not '${env}'`);
  const keys = [...new Set([...Object.keys(record.envOptions), ...Object.keys(envOptions)])].sort();
  const differ = keys.filter((k) => canonicalJson(record.envOptions[k]) !== canonicalJson(envOptions[k]));
  if (differ.length > 0) {
    const value = (v: unknown) => (v === undefined ? 'unset' : canonicalJson(v));
    const shown = differ.map((k) => `${k} ${value(envOptions[k])} (warm start: ${value(record.envOptions[k])})`);
    throw new UsageError(`--warm-start ${runId}: its warm start was trained with other env options: ${shown.join(', ')}`);
  }
  const { assets, params } = loadModelFolder(dir);
  return { runId, from: runId, assets, params, record };
}

/**
 * `--init-from run:RUN[@STEP]`: RL from a checkpoint of train run `runId` (folder `checkpointDir`),
 * whose warm start is in `warmStartDir`. The env must be the same (the tokenizer was trained on its
 * text) but its options may differ: a curriculum trains an easier variant first, then the real one
 * from there. The answer budget and RL's row length are the source run's, as with `--warm-start`.
 */
export function loadInitSource(runId: string, step: number, checkpointDir: string, warmStartDir: string, env: string): WarmStartSource {
  const label = `--init-from run:${runId}@${step}`;
  const record = readWarmStartRecord(label, warmStartDir);
  if (record.env !== env) throw new UsageError(`${label}: that run trains env '${record.env}', not '${env}'`);
  const { assets, params } = loadModelFolder(checkpointDir);
  return { runId, from: `${runId}@${step}`, assets, params, record };
}

/** The reused warm start's summary as this run reports it: its figures, its source, and none of its time (spent by the other run). */
export function reusedSummary(source: WarmStartSource, path: string): WarmStartSummary {
  return { ...source.record.summary, path, from: source.from };
}

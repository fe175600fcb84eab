/**
 * `spindle train --from-store RUN --model DIR|run:RUN[@STEP]`: offline RL on the scored groups a run
 * stored (e.g. through `spindle proxy`), with a model whose tokenizer made their ids
 * (src/train/from-store.ts). Prints what was selected, skipped and trained; with --json one object
 * is the last line of stdout.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../../core/errors.ts';
import { initEngine } from '../../model/engine.ts';
import { openStore } from '../../store/open.ts';
import { defaultDbPath } from '../../store/paths.ts';
import { runIdSchema } from '../../store/recordSchemas.ts';
import type { OfflineTrainConfig } from '../../train/from-store-config.ts';
import { loadStartModel } from '../../train/from-store-model.ts';
import { trainFromStore } from '../../train/from-store.ts';
import { fmt, makeOutput } from '../output.ts';

export interface TrainFromStoreFlags {
  fromStore: string;
  model?: string;
  task?: string[];
  config?: string;
  steps?: number;
  lr?: number;
  seed?: number;
  run?: string;
  acceptModel?: string[];
  threads?: number;
  db?: string;
  json?: boolean;
}

function readConfig(path: string | undefined): Record<string, unknown> {
  if (path === undefined) return {};
  const full = resolve(path);
  if (!existsSync(full)) throw new UsageError(`--config ${path}: no such file`);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(full, 'utf8'));
  } catch (error) {
    throw new UsageError(`--config ${path}: not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`--config ${path}: must hold a JSON object`);
  return value as Record<string, unknown>;
}

export async function trainFromStoreCommand(flags: TrainFromStoreFlags): Promise<void> {
  const out = makeOutput(!!flags.json);
  if (!runIdSchema.safeParse(flags.fromStore).success) throw new UsageError(`--from-store: '${flags.fromStore}' is not a run id (see spindle runs)`);
  if (flags.model === undefined) throw new UsageError('--model: give the model to train (a checkpoint folder, model:DIR or run:RUN[@STEP]) whose tokenizer made the stored ids');
  if (flags.run !== undefined && !runIdSchema.safeParse(flags.run).success) throw new UsageError(`--run: '${flags.run}' is not a valid run id`);
  const config: OfflineTrainConfig = {
    ...readConfig(flags.config),
    ...(flags.steps !== undefined ? { steps: flags.steps } : {}),
    ...(flags.lr !== undefined ? { lr: flags.lr } : {}),
    ...(flags.seed !== undefined ? { seed: flags.seed } : {}),
  };
  const db = resolve(flags.db ?? defaultDbPath());
  if (!existsSync(db)) throw new UsageError(`--from-store ${flags.fromStore}: there is no database at ${db} (pass --db)`);
  await initEngine(flags.threads === undefined ? {} : { threads: flags.threads });
  const store = await openStore(db);
  try {
    const model = await loadStartModel(flags.model, store);
    const outcome = await trainFromStore({
      store,
      selection: { runId: flags.fromStore, taskIds: flags.task ?? [] },
      model,
      config,
      ...(flags.run !== undefined ? { runId: flags.run } : {}),
      acceptModelIds: flags.acceptModel ?? [],
      onStep: (step, m) => process.stderr.write(`step ${step}: loss ${fmt(m['train/loss'])}, tokens ${m['tokens/trained'] ?? 0}, importance weight ${fmt(m['importance/weight_mean'], 3)}\n`),
    });
    const { selection, advantages, batch } = outcome.data;
    const skipped = Object.entries(selection.skipped).filter(([, n]) => n > 0);
    out.line(`trained ${model.source} on run ${flags.fromStore}: ${outcome.steps} steps -> run ${outcome.runId}`);
    out.line(`  trajectories: ${selection.read} read, ${selection.trajectories.length} usable, ${outcome.data.trajectories.length} trained`);
    if (skipped.length > 0) out.line(`  skipped: ${skipped.map(([r, n]) => `${n} ${r}`).join(', ')}`);
    out.line(`  groups: ${advantages.stats.groups}, zero-variance ${advantages.stats.zeroVarianceGroups} (dropped ${advantages.dropped.length})`);
    out.line(`  samples: ${batch.samples.length} (${batch.stats.trainedTokens} trained tokens, ${batch.stats.calls - batch.stats.trainedCalls} calls excluded)`);
    out.line(`  policy scored at temperature ${outcome.temperature}`);
    out.line(`  checkpoint: ${resolve(outcome.runDir, outcome.checkpoint)} (use --policy run:${outcome.runId})`);
    out.result({
      runId: outcome.runId,
      checkpoint: resolve(outcome.runDir, outcome.checkpoint),
      steps: outcome.steps,
      trajectories: { read: selection.read, usable: selection.trajectories.length, trained: outcome.data.trajectories.length, skipped: selection.skipped },
      groups: { count: advantages.stats.groups, zeroVariance: advantages.stats.zeroVarianceGroups, dropped: advantages.dropped.length },
      samples: batch.samples.length,
      temperature: outcome.temperature,
      metrics: outcome.metrics.at(-1) ?? {},
    });
  } finally {
    await store.close();
  }
}

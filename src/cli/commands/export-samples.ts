/**
 * `spindle export-samples --from-store RUN --format atropos|jsonl --out FILE`: the training samples
 * of a run's scored groups (the same selection, advantages and samples as offline training,
 * src/train/from-store-samples.ts) as Atropos ScoredData lines (one group a line, messages
 * included) or Spindle's TrainingSample lines.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError } from '../../core/errors.ts';
import { openStore } from '../../store/open.ts';
import { defaultDbPath } from '../../store/paths.ts';
import { runIdSchema } from '../../store/recordSchemas.ts';
import { atroposToJsonl, toAtroposScoredData } from '../../train/atropos.ts';
import { samplesFromStore } from '../../train/from-store-samples.ts';
import { samplesToJsonl } from '../../train/samples-jsonl.ts';
import { makeOutput } from '../output.ts';

export const SAMPLE_FORMATS = ['atropos', 'jsonl'] as const;

export interface ExportSamplesFlags {
  fromStore: string;
  format: string;
  out: string;
  task?: string[];
  /** Train on calls cut at max tokens instead of leaving them out (samples `truncated: keep`). */
  keepTruncated?: boolean;
  db?: string;
  json?: boolean;
}

export interface ExportedSamples {
  file: string;
  format: string;
  samples: number;
  trajectories: number;
  skipped: Record<string, number>;
  groups: number;
  zeroVarianceDropped: number;
  excludedCalls: Record<string, number>;
}

/** Validates the flags, writes the file and returns what it holds (the command prints it). */
export async function exportStoredSamples(flags: ExportSamplesFlags): Promise<ExportedSamples> {
  if (!runIdSchema.safeParse(flags.fromStore).success) throw new UsageError(`--from-store: '${flags.fromStore}' is not a run id (see spindle runs)`);
  if (!(SAMPLE_FORMATS as readonly string[]).includes(flags.format)) {
    throw new UsageError(`--format: expected one of ${SAMPLE_FORMATS.join(', ')}, got ${JSON.stringify(flags.format)}`);
  }
  if (flags.out.trim() === '') throw new UsageError('--out: give the file to write');
  const db = resolve(flags.db ?? defaultDbPath());
  if (!existsSync(db)) throw new UsageError(`--from-store ${flags.fromStore}: there is no database at ${db} (pass --db)`);
  const store = await openStore(db);
  try {
    const data = await samplesFromStore(store, { runId: flags.fromStore, taskIds: flags.task ?? [] }, { samples: { truncated: flags.keepTruncated ? 'keep' : 'mask' } });
    if (data.selection.unknownTasks.length > 0) {
      throw new UsageError(`--task: run '${flags.fromStore}' has no trajectory of task ${data.selection.unknownTasks.map((t) => `'${t}'`).join(', ')}`);
    }
    const text = flags.format === 'atropos' ? atroposToJsonl(toAtroposScoredData(data.batch.samples, { trajectories: data.trajectories })) : samplesToJsonl(data.batch.samples);
    const file = resolve(flags.out);
    await writeFile(file, text, 'utf8');
    return {
      file,
      format: flags.format,
      samples: data.batch.samples.length,
      trajectories: data.trajectories.length,
      skipped: data.selection.skipped,
      groups: data.advantages.stats.groups,
      zeroVarianceDropped: data.advantages.dropped.length,
      excludedCalls: data.batch.stats.excluded,
    };
  } finally {
    await store.close();
  }
}

export async function exportSamplesCommand(flags: ExportSamplesFlags): Promise<void> {
  const out = makeOutput(!!flags.json);
  const result = await exportStoredSamples(flags);
  const skipped = Object.entries(result.skipped).filter(([, n]) => n > 0);
  out.line(`wrote ${result.samples} samples of ${result.trajectories} trajectories (${result.format}) to ${result.file}`);
  if (skipped.length > 0) out.line(`  skipped trajectories: ${skipped.map(([r, n]) => `${n} ${r}`).join(', ')}`);
  out.line(`  groups: ${result.groups}, zero-variance dropped ${result.zeroVarianceDropped}`);
  out.result(result);
}

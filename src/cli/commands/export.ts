/**
 * `spindle export run:RUN[@STEP] --out DIR`: a run's checkpoint as a Hugging Face model folder (or
 * `model:DIR` for any checkpoint folder), merged with its LoRA adapter on --merge-lora, else the base
 * plus the adapter in DIR/adapter/.
 */
import { resolve } from 'node:path';
import { UsageError } from '../../core/errors.ts';
import { EXPORT_DTYPES, exportCheckpoint, type ExportDtype } from '../../model/export.ts';
import { resolveRunCheckpoint } from '../../policy/run-checkpoint.ts';
import { makeOutput } from '../output.ts';

export interface ExportFlags {
  out: string;
  mergeLora?: boolean;
  dtype: string;
  force?: boolean;
  db?: string;
  json?: boolean;
}

/** The checkpoint folder SOURCE names, and how to call it in the output. */
async function sourceFolder(source: string, db: string | undefined): Promise<{ dir: string; name: string }> {
  if (source.startsWith('run:')) {
    const found = await resolveRunCheckpoint(source.slice('run:'.length), db, 'SOURCE');
    return { dir: found.dir, name: `run:${found.runId}@${found.step}` };
  }
  if (source.startsWith('model:') && source.length > 'model:'.length) return { dir: resolve(source.slice('model:'.length)), name: source };
  throw new UsageError(`SOURCE: expected run:RUN[@STEP] or model:DIR, got ${JSON.stringify(source)}`);
}

export async function exportCommand(source: string, flags: ExportFlags): Promise<void> {
  const out = makeOutput(!!flags.json);
  if (!(EXPORT_DTYPES as readonly string[]).includes(flags.dtype)) {
    throw new UsageError(`--dtype: expected one of ${EXPORT_DTYPES.join(', ')}, got ${JSON.stringify(flags.dtype)}`);
  }
  if (flags.out.trim() === '') throw new UsageError('--out: give the folder to write');
  const from = await sourceFolder(source, flags.db);
  const result = exportCheckpoint(from.dir, flags.out, { mergeLora: !!flags.mergeLora, dtype: flags.dtype as ExportDtype, force: !!flags.force });
  const adapter = {
    none: 'full weights (no LoRA adapter)',
    merged: 'LoRA adapter merged into the weights',
    separate: 'base model + PEFT adapter in adapter/ (pass --merge-lora for one merged model)',
  }[result.adapter];
  out.line(`exported ${from.name} to ${result.dir}`);
  out.line(`  ${adapter}; ${result.params.toLocaleString('en-US')} parameters stored as ${result.dtype}`);
  for (const file of result.files) out.line(`  ${file}`);
  out.result({ source: from.name, sourceDir: from.dir, ...result });
}

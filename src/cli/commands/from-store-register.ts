/**
 * The command-line side of training and exporting from stored groups:
 *
 *   spindle train --from-store RUN --model DIR|run:RUN[@STEP] [--task ID]... [--steps N] [--lr X]
 *   spindle train-offline RUN --model ...            (the same, as its own command)
 *   spindle export-samples --from-store RUN --format atropos|jsonl --out FILE [--task ID]...
 *
 * `train --from-store` reuses train's --config (an offline config then: from-store-config.ts),
 * --steps, --lr, --seed, --threads, --db and --json; the online-only flags are refused with it.
 */
import type { Command } from 'commander';
import { UsageError } from '../../core/errors.ts';
import { collect, intFlag, numberFlag } from '../args.ts';
import type { TrainFromStoreFlags } from './train-from-store.ts';

const DB_HELP = 'SQLite database (default .spindle/spindle.db)';
const MODEL_HELP = 'the model to train: a checkpoint folder, model:DIR or run:RUN[@STEP], whose tokenizer made the stored ids';
const TASK_HELP = 'only the groups of this task id (repeatable; default all)';
const ACCEPT_HELP = 'a recorded model id that served this same tokenizer under another name (repeatable)';

/** Flags of `spindle train` that only an online run reads. */
const ONLINE_ONLY = ['env', 'envOpt', 'groupSize', 'batchSeeds', 'evalEvery', 'checkpointEvery', 'resume', 'warmStart'] as const;
/** Flags only `--from-store` reads. */
const OFFLINE_ONLY = ['model', 'task', 'acceptModel', 'run'] as const;

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function given(opts: Record<string, unknown>, name: string): boolean {
  const value = opts[name];
  return Array.isArray(value) ? value.length > 0 : value !== undefined;
}

/** Adds --from-store and its flags to the `train` command. */
export function addFromStoreTrainOptions(train: Command): Command {
  return train
    .option('--from-store <run>', 'train offline on the scored groups a run stored (e.g. by spindle proxy); needs --model')
    .option('--model <DIR|run:RUN[@STEP]>', `with --from-store: ${MODEL_HELP}`)
    .option('--task <id>', `with --from-store: ${TASK_HELP}`, collect, [])
    .option('--accept-model <id>', `with --from-store: ${ACCEPT_HELP}`, collect, [])
    .option('--run <id>', 'with --from-store: the id of the new run (default: a new offline_… id)');
}

/** `train`'s action: offline training when --from-store is given, else `online(opts)`. */
export async function trainOrFromStore<F extends object>(opts: F, online: (opts: F) => Promise<void> | void): Promise<void> {
  const o = opts as Record<string, unknown>;
  if (o.fromStore === undefined) {
    const stray = OFFLINE_ONLY.filter((name) => given(o, name));
    if (stray.length > 0) throw new UsageError(`--${stray.map(kebab).join(', --')}: only with --from-store RUN`);
    return online(opts);
  }
  const stray = ONLINE_ONLY.filter((name) => given(o, name));
  if (stray.length > 0) throw new UsageError(`--from-store trains on stored groups; --${stray.map(kebab).join(', --')} ${stray.length === 1 ? 'is' : 'are'} for training on an env`);
  const { trainFromStoreCommand } = await import('./train-from-store.ts');
  return trainFromStoreCommand(o as unknown as TrainFromStoreFlags);
}

/** Registers `train-offline` and `export-samples`. */
export function registerFromStoreCommands(program: Command): void {
  program
    .command('train-offline')
    .description('train a model on the scored groups a run stored (e.g. by spindle proxy): spindle train --from-store RUN')
    .argument('<run>', 'the run whose scored groups are trained on')
    .requiredOption('--model <DIR|run:RUN[@STEP]>', MODEL_HELP)
    .option('--task <id>', TASK_HELP, collect, [])
    .option('--config <file.json>', 'offline training config (JSON: steps, lr, optimizer, loss, advantage, samples, rows, rowLength)')
    .option('--steps <n>', 'passes over the samples', intFlag('--steps', 1, 10_000_000))
    .option('--lr <lr>', 'learning rate', numberFlag('--lr', 1e-12, 10))
    .option('--seed <s>', 'seed of the mini-batch order', intFlag('--seed', 0, 999_999))
    .option('--accept-model <id>', ACCEPT_HELP, collect, [])
    .option('--run <id>', 'the id of the new run (default: a new offline_… id)')
    .option('--threads <n>', 'engine threads (default: all cores)', intFlag('--threads', 1, 256))
    .option('--db <path>', DB_HELP)
    .option('--json', 'print one JSON object as the last line')
    .action(async (run: string, opts: Omit<TrainFromStoreFlags, 'fromStore'>) => (await import('./train-from-store.ts')).trainFromStoreCommand({ ...opts, fromStore: run }));

  program
    .command('export-samples')
    .description("write the training samples of a run's scored groups as Atropos ScoredData or Spindle sample JSON lines")
    .requiredOption('--from-store <run>', 'the run whose scored groups are exported')
    .requiredOption('--out <file>', 'file to write')
    .option('--format <atropos|jsonl>', 'atropos: one ScoredData per group; jsonl: one TrainingSample per line', 'atropos')
    .option('--task <id>', TASK_HELP, collect, [])
    .option('--keep-truncated', 'keep calls cut at max tokens (left out by default)')
    .option('--db <path>', DB_HELP)
    .option('--json', 'print one JSON object as the last line')
    .action(async (opts) => (await import('./export-samples.ts')).exportSamplesCommand(opts));
}
